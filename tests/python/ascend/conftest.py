import os
import sys

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "ascend")
sys.path.insert(0, os.path.abspath(EXAMPLES))
