"""tilelang.utils: tensor supply and comparison, device and target helpers."""
from .tensor import TensorSupplyType, get_tensor_supply, map_torch_type, torch_assert_close  # noqa: F401
from .target import determine_target, check_cuda_availability, target_is_cuda  # noqa: F401
from .device import get_current_device, get_available_cpu_count  # noqa: F401
from .language import get_prim_func_name, is_fragment, is_global, is_local, is_shared  # noqa: F401
from .deprecated import deprecated  # noqa: F401
from .float4 import pack_float4, unpack_float4  # noqa: F401
