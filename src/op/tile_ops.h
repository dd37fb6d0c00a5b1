// The tile operators: one TileOp class per operator (the interface and the registry are
// ir/tile_op.h). Each class is defined in src/op/<op>.cc, which registers one instance per spelling
// of the operator. Passes and targets ask an op's kind() and, for what differs between the spellings
// of one operator, its class here (`tile_op_as<GemmOp>(node)->form()`), never its name.
#pragma once

#include <string>

#include "ir/tile_op.h"

namespace tl {

class CopyOp final : public TileOp {
 public:
  CopyOp() : TileOp("copy", TileOpKind::kCopy) {}
  void verify(const TileOpNode& op) const override;
  AccessRegions effects(const TileOpNode& op) const override;
  bool infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const override;
  Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const override;
};

// fill and tile.fill (no layout constraint: a fill lets the fragment's other users decide).
class FillOp final : public TileOp {
 public:
  FillOp(std::string name, bool vector_spelling)
      : TileOp(std::move(name), TileOpKind::kFill), vector_spelling_(vector_spelling) {}
  // T.tile.fill, TileLang-Ascend's spelling among the vector ops (tile.<fn>): cuda gives it the loop
  // form like the other tile.<fn> ops it does not lower itself.
  bool vector_spelling() const { return vector_spelling_; }
  void verify(const TileOpNode& op) const override;
  AccessRegions effects(const TileOpNode& op) const override;
  Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const override;

 private:
  bool vector_spelling_;
};

// T.gemm and its Ascend spellings.
enum class GemmForm : uint8_t {
  kGemm,    // T.gemm: attrs transpose_A/B, clear_accum, policy, k_pack
  kGemmV0,  // T.gemm_v0 (Ascend): attr init
  kMma,     // T.mma (Ascend cube instruction on L0 operands): attr init
};
class GemmOp final : public TileOp {
 public:
  GemmOp(std::string name, GemmForm form) : TileOp(std::move(name), TileOpKind::kGemm), form_(form) {}
  GemmForm form() const { return form_; }
  // The attribute that says whether C is overwritten: "clear_accum" (T.gemm) or "init".
  const char* clear_attr() const { return form_ == GemmForm::kGemm ? "clear_accum" : "init"; }
  void verify(const TileOpNode& op) const override;
  AccessRegions effects(const TileOpNode& op) const override;
  // src/op/gemm_layout.cc: wgmma for the whole kernel or not, then the instruction's layouts.
  KernelChoice propose_layout(const TileOpNode& op, LayoutInference& ctx) const override;
  bool infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const override;
  Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const override;

 private:
  GemmForm form_;
};

// True when `op` is a GEMM written in `form` (T.gemm rather than an Ascend spelling, say).
inline bool is_gemm_form(const TileOpNode& op, GemmForm form) {
  const GemmOp* g = tile_op_as<GemmOp>(op);
  return g && g->form() == form;
}

class ReduceOp final : public TileOp {
 public:
  ReduceOp() : TileOp("reduce", TileOpKind::kReduce) {}
  void verify(const TileOpNode& op) const override;
  AccessRegions effects(const TileOpNode& op) const override;
  // The source may take the default layout; the destination follows the source.
  bool infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const override;
  Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const override;
};

class CumsumOp final : public TileOp {
 public:
  CumsumOp() : TileOp("cumsum", TileOpKind::kCumsum) {}
  void verify(const TileOpNode& op) const override;
  AccessRegions effects(const TileOpNode& op) const override;
  Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const override;
};

// atomic_add / atomic_max / atomic_min.
class AtomicOp final : public TileOp {
 public:
  // combine: "add", "max" or "min".
  explicit AtomicOp(const std::string& combine) : TileOp("atomic_" + combine, TileOpKind::kAtomic), combine_(combine) {}
  const std::string& combine() const { return combine_; }
  void verify(const TileOpNode& op) const override;
  AccessRegions effects(const TileOpNode& op) const override;
  bool infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const override;
  Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const override;

 private:
  std::string combine_;
};

// tile.<fn>: the element-wise and vector operators of TileLang-Ascend (tile.add, tile.exp, tile.cast,
// tile.axpy, ..., and tile.sort / tile.topk / tile.reduce_* which exist only as Ascend instructions).
// The math functions (one operand or two, computed in dst's dtype) and the other vector ops.
enum class ElementwiseArity : uint8_t { kUnary, kBinary, kOther };
class ElementwiseOp final : public TileOp {
 public:
  using VerifyFn = void (*)(const TileOpNode&);
  using EffectsFn = AccessRegions (*)(const TileOpNode&);
  using LowerFn = Stmt (*)(const TileOpNode&, const LowerContext&);
  // fn: the operator's function without the "tile." prefix ("add", "exp"); lower null when the op
  // has no loop form.
  ElementwiseOp(const std::string& fn, ElementwiseArity arity, VerifyFn verify, EffectsFn effects, LowerFn lower)
      : TileOp("tile." + fn, TileOpKind::kElementwise),
        fn_(fn),
        arity_(arity),
        verify_(verify),
        effects_(effects),
        lower_(lower) {}
  const std::string& fn() const { return fn_; }
  // kUnary: dst = f(src) (tile.exp, tile.relu, ...); kBinary: dst = a op b (tile.add, tile.max, ...).
  ElementwiseArity arity() const { return arity_; }
  void verify(const TileOpNode& op) const override { verify_(op); }
  AccessRegions effects(const TileOpNode& op) const override { return effects_(op); }
  bool infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const override;
  bool has_loop_form() const override { return lower_ != nullptr; }
  Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const override;

 private:
  std::string fn_;
  ElementwiseArity arity_;
  VerifyFn verify_;
  EffectsFn effects_;
  LowerFn lower_;
};

// print and dump_tensor.
class PrintOp final : public TileOp {
 public:
  PrintOp(std::string name, bool dumps_tensor)
      : TileOp(std::move(name), TileOpKind::kPrint), dumps_tensor_(dumps_tensor) {}
  // T.dump_tensor (Ascend: a bounded dump with a desc tag) rather than T.print.
  bool dumps_tensor() const { return dumps_tensor_; }
  void verify(const TileOpNode& op) const override;
  AccessRegions effects(const TileOpNode& op) const override;
  Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const override;

 private:
  bool dumps_tensor_;
};

class AnnotateLayoutOp final : public TileOp {
 public:
  AnnotateLayoutOp() : TileOp("annotate_layout", TileOpKind::kAnnotateLayout) {}
  void verify(const TileOpNode& op) const override;
  AccessRegions effects(const TileOpNode&) const override { return {}; }
  bool infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const override;
  Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const override;
};

class AnnotateAddressOp final : public TileOp {
 public:
  AnnotateAddressOp() : TileOp("annotate_address", TileOpKind::kAnnotateAddress) {}
  void verify(const TileOpNode& op) const override;
  AccessRegions effects(const TileOpNode&) const override { return {}; }
  Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const override;
};

class FinalizeReducerOp final : public TileOp {
 public:
  FinalizeReducerOp() : TileOp("finalize_reducer", TileOpKind::kFinalizeReducer) {}
  void verify(const TileOpNode& op) const override;
  AccessRegions effects(const TileOpNode& op) const override;
  Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const override;
};

// dist.copy / dist.barrier / dist.signal / dist.wait (src/op/distributed.cc).
enum class DistForm : uint8_t { kCopy, kBarrier, kSignal, kWait };
class DistributedOp final : public TileOp {
 public:
  DistributedOp(std::string name, DistForm form) : TileOp(std::move(name), TileOpKind::kDistributed), form_(form) {}
  DistForm form() const { return form_; }
  void verify(const TileOpNode& op) const override;
  AccessRegions effects(const TileOpNode& op) const override;
  Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const override;

 private:
  DistForm form_;
};

}  // namespace tl
