#include "ir/verifier.h"

#include <sstream>

#include "ir/error.h"
#include "ir/printer.h"
#include "ir/scope_walk.h"
#include "ir/tile_op.h"

namespace tl {

namespace {

class Verifier : public ScopeWalker {
 public:
  explicit Verifier(const PrimFunc& f) : ScopeWalker(/*bind_attr_vars=*/true), func_(f) {}

  void run() { walk_func(func_); }

 protected:
  void on_free_var(const Var& v) override {
    fail("variable '" + v.name() + "' (" + v.dtype().str() +
         ") is used outside any scope that defines it; define it with a for/let/kernel, as a scalar parameter, or "
         "as a dimension of a parameter's shape");
  }

  void on_free_buffer(const Buffer& b) override {
    // GM workspaces that the runtime allocates (Ascend Developer mode, ascend_cv_split) are declared
    // by name in the function attribute "ascend.cv_workspaces" instead of an allocation.
    if (b.scope() == MemScope::kGlobal) {
      auto it = func_.attrs().find("ascend.cv_workspaces");
      if (it != func_.attrs().end() && it->second.kind() == Attr::kStrList)
        for (auto& n : it->second.as_str_list())
          if (n == b.name()) return;
    }
    fail("buffer '" + b.name() + "' (" + scope_name(b.scope()) +
         ") is used outside its allocation scope: it is neither a parameter nor allocated by an enclosing alloc");
  }

  void on_access(const Buffer& b, size_t n, bool is_region) override {
    if (is_region && n != b.ndim())
      fail("region of buffer '" + b.name() + "' has " + std::to_string(n) + " ranges but the buffer has " +
           std::to_string(b.ndim()) + " dimensions");
    if (!is_region && n != b.ndim() && n != 1)
      fail("buffer '" + b.name() + "' has " + std::to_string(b.ndim()) + " dimensions but is indexed with " +
           std::to_string(n) + " indices");
  }

  void enter_stmt(const Stmt& s) override {
    stack_.push_back(&s);
    switch (s.kind()) {
      case StmtKind::kKernel:
        if (kernel_depth_ > 0) fail("T.Kernel is nested inside another T.Kernel; a kernel launch must be top level");
        ++kernel_depth_;
        loops_.push_back(kKernelMark);  // loops outside the kernel cannot be left from inside it
        break;
      case StmtKind::kFor: loops_.push_back(static_cast<int>(s.as<ForNode>()->for_kind)); break;
      case StmtKind::kLoopControl: {
        const char* what = s.as<LoopControlNode>()->is_break ? "'break'" : "'continue'";
        if (loops_.empty() || loops_.back() == kKernelMark)
          fail(std::string(what) + " is outside any loop");
        auto kind = static_cast<ForKind>(loops_.back());
        if (kind == ForKind::kParallel || kind == ForKind::kVectorized)
          fail(std::string(what) + " directly inside a " + for_kind_name(kind) +
               " loop; only sequential loops (T.serial, range, T.unroll) can be left early");
        break;
      }
      case StmtKind::kTileOp: check_tile_op(*s.as<TileOpNode>()); break;
      default: break;
    }
  }

  void exit_stmt(const Stmt& s) override {
    if (s.kind() == StmtKind::kKernel) {
      --kernel_depth_;
      loops_.pop_back();
    } else if (s.kind() == StmtKind::kFor) {
      loops_.pop_back();
    }
    stack_.pop_back();
  }

 private:
  static constexpr int kKernelMark = -1;

  void check_tile_op(const TileOpNode& op) {
    const TileOp* def = find_tile_op(op);
    if (!def) return;
    try {
      def->verify(op);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      fail(std::string("the argument check of tile op '") + op.op + "' failed unexpectedly: " + e.what());
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    std::string loc;
    for (auto it = stack_.rbegin(); it != stack_.rend() && loc.empty(); ++it) loc = (*it)->span().str();
    if (loc.empty()) loc = func_->span.str();
    std::ostringstream os;
    os << (loc.empty() ? "" : loc + ": ") << "IR verification failed in function '" << func_.name() << "': " << what;
    if (!stack_.empty()) {
      std::string text = print_stmt(*stack_.back());
      std::string first = text.substr(0, text.find('\n'));
      size_t b = first.find_first_not_of(' ');
      first = b == std::string::npos ? first : first.substr(b);
      if (first.size() > 160) first = first.substr(0, 157) + "...";
      os << "\n  in `" << first << "`";
    }
    throw VerifyError(os.str());
  }

  const PrimFunc& func_;
  std::vector<const Stmt*> stack_;
  std::vector<int> loops_;
  int kernel_depth_ = 0;
};

}  // namespace

void verify(const PrimFunc& f) {
  if (!f.defined()) throw VerifyError("IR verification failed: undefined function");
  Verifier(f).run();
}

}  // namespace tl
