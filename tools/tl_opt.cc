// tl-opt: runs named passes over textual IR and prints the result.
//   tl-opt input.tir --pass simplify --pass plan_memory [--target cuda] [--dump-each]
#include <cstdio>

int main(int argc, char** argv) {
  std::fprintf(stderr, "tl-opt: not implemented yet\n");
  return 2;
}
