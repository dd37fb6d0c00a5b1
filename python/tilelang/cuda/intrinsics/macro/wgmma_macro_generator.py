"""Stand-in for tilelang.cuda.intrinsics.macro.wgmma_macro_generator (see tilelang.cuda.intrinsics)."""
from ._standin import emitter

TensorCoreIntrinEmitter = emitter("tilelang.cuda.intrinsics.macro.wgmma_macro_generator.TensorCoreIntrinEmitter")
TensorCoreIntrinEmitterWithLadderTransform = emitter(
    "tilelang.cuda.intrinsics.macro.wgmma_macro_generator.TensorCoreIntrinEmitterWithLadderTransform")
