// The cuda code generator's calls (codegen_impl.h): math functions, the tl:: device library of
// include/tl/cuda (copies, cp.async, mbarriers, TMA, wgmma wrappers through cuda.call), atomics,
// printf and device asserts, and the distributed builtins (tl.dist.*).
#include <map>

#include "ir/error.h"
#include "ir/printf_format.h"
#include "target/c_source.h"
#include "target/cuda/codegen_impl.h"
#include "target/cuda/lower_context.h"

namespace tl {
namespace cuda_codegen {

namespace {

const std::map<std::string, std::string>& math_calls() {
  static const std::map<std::string, std::string> m = {
      {"exp", "tl::exp"},       {"exp2", "tl::exp2"},       {"log", "tl::log"},         {"log2", "tl::log2"},
      {"log10", "tl::log10"},   {"sqrt", "tl::sqrt"},       {"rsqrt", "tl::rsqrt"},     {"tanh", "tl::tanh"},
      {"sigmoid", "tl::sigmoid"}, {"abs", "tl::abs"},       {"pow", "tl::pow"},         {"floor", "tl::floor"},
      {"ceil", "tl::ceil"},     {"round", "tl::round"},     {"trunc", "tl::trunc"},     {"sin", "tl::sin"},
      {"cos", "tl::cos"},       {"tan", "tl::tan"},         {"erf", "tl::erf"},         {"fmod", "tl::fmod"},
      {"__exp", "tl::fast_exp"}, {"__log", "tl::fast_log"}, {"__sin", "tl::fast_sin"},  {"__cos", "tl::fast_cos"},
      {"relu", "tl::relu"},     {"silu", "tl::silu"},       {"reciprocal", "tl::reciprocal"}};
  return m;
}

}  // namespace

// `&buf[index]` operand of a builtin, and its buffer.
std::pair<std::string, Buffer> CudaCodegen::address(const Expr& e) {
  const auto* c = e.as<CallNode>();
  if (!c || c->op != "cuda.address_of" || c->args.empty())
    throw_error<Error>("internal error: expected cuda.address_of, got ", to_string(e));
  const auto* l = c->args[0].as<BufferLoadNode>();
  TL_ICHECK(l, "address_of without a load");
  return {"(&" + access(l->buffer, l->indices) + ")", l->buffer};
}

// tl.dist.* (include/tl/cuda/dist.h): executed by every thread of the block.
std::string CudaCodegen::dist_call(const CallNode* c) {
  const std::string& op = c->op;
  auto a = [&](size_t i) { return expr(c->args.at(i)); };
  auto what = [&]() {
    const auto* s = c->args.empty() ? nullptr : c->args.back().as<StringImmNode>();
    TL_ICHECK(s, "tl.dist builtin without its source text");
    return c_string_literal(s->value);
  };
  // In the consumer warpgroups of a warp-specialized kernel the op synchronizes only them; in the
  // producer role (only T.wait is placed there, by warp_specialize) the TMA thread waits alone.
  const std::string tmpl = in_consumer_ ? "<tl::dist::kConsumers>" : in_producer_ ? "<tl::dist::kThread>" : "";
  if (op == "tl.dist.rank") return "tl::dist::rank()";
  if (op == "tl.dist.world") return "tl::dist::world()";
  if (in_producer_ && op != "tl.dist.wait")
    throw_error<Error>("internal error: ", op, " in the producer role of a warp-specialized kernel (only T.wait goes there)");
  if (op == "tl.dist.copy" && c->args.size() == 9)
    return "tl::dist::copy" + tmpl + "((void*)" + a(0) + ", (const void*)" + a(1) + ", " + a(2) + ", " + a(3) + ", " + a(4) +
           ", " + a(5) + ", " + a(6) + ", " + a(7) + ", " + what() + ")";
  if (op == "tl.dist.barrier" && c->args.size() == 2) return "tl::dist::barrier" + tmpl + "(" + a(0) + ", " + what() + ")";
  if (op == "tl.dist.signal" && c->args.size() == 5)
    return "tl::dist::signal" + tmpl + "(" + a(0) + ", " + a(1) + ", " + a(2) + ", " + a(3) + ", " + what() + ")";
  if (op == "tl.dist.wait" && c->args.size() == 4)
    return "tl::dist::wait" + tmpl + "(" + a(0) + ", " + a(1) + ", " + a(2) + ", " + what() + ")";
  throw_error<Error>("internal error: malformed builtin ", op, " with ", c->args.size(), " arguments");
}

std::string CudaCodegen::call(const CallNode* c) {
  const std::string& op = c->op;
  auto args_from = [&](size_t first) {
    std::string s;
    for (size_t i = first; i < c->args.size(); ++i) s += (i > first ? ", " : "") + expr(c->args[i]);
    return s;
  };
  if (auto it = math_calls().find(op); it != math_calls().end()) return it->second + "(" + args_from(0) + ")";
  if (op == "cuda.address_of") {
    const auto* l = c->args.empty() ? nullptr : c->args[0].as<BufferLoadNode>();
    TL_ICHECK(l, "address_of without a load");
    return "(&" + access(l->buffer, l->indices) + ")";
  }
  if (op == "tl.address_of") {
    const auto* l = c->args.empty() ? nullptr : c->args[0].as<BufferLoadNode>();
    TL_ICHECK(l, "address_of without a load");
    return "(&" + access(l->buffer, l->indices) + ")";
  }
  if (op.rfind("tl.dist.", 0) == 0) return dist_call(c);
  if (op == "cuda.call" || op == "cuda.call_sync") {
    const auto* callee = c->args.empty() ? nullptr : c->args[0].as<StringImmNode>();
    TL_ICHECK(callee, "cuda.call without a callee");
    return callee->value + "(" + args_from(1) + ")";
  }
  if (op == "cuda.copy_vec" || op == "cuda.copy_vec_zfill") {
    auto [dst, db] = address(c->args[0]);
    auto [src, sb] = address(c->args[1]);
    int64_t bytes = get_const_int(c->args[2], "copy size");
    int64_t n = bytes / db.dtype().element_bytes();
    std::string t = cuda_type_name(db.dtype());
    if (op == "cuda.copy_vec") return "tl::copy_vec<" + t + ", " + std::to_string(n) + ">(" + dst + ", " + src + ")";
    return "tl::copy_sync_zfill<" + t + ", " + std::to_string(n) + ">(" + dst + ", " + src + ", " + expr(c->args[3]) +
           ")";
  }
  if (op == "cuda.copy_cast") {
    auto [dst, db] = address(c->args[0]);
    auto [src, sb] = address(c->args[1]);
    return "tl::copy_cast<" + std::to_string(get_const_int(c->args[2], "copy length")) + ">(" + dst + ", " + src + ")";
  }
  if (op == "cuda.store_exchange") {
    auto [dst, db] = address(c->args[0]);
    auto [src, sb] = address(c->args[1]);
    return "tl::store_exchange<" + std::to_string(get_const_int(c->args[2], "lane group")) + ", " +
           std::to_string(get_const_int(c->args[3], "group length")) + ", " +
           std::to_string(get_const_int(c->args[4], "register stride")) + ">(" + dst + ", " + src + ", " +
           expr(c->args[5]) + ")";
  }
  if (op == "cuda.cp_async") {
    auto [dst, db] = address(c->args[0]);
    auto [src, sb] = address(c->args[1]);
    std::string bytes = std::to_string(get_const_int(c->args[2], "copy size"));
    if (c->args.size() < 4 || is_one(c->args[3])) return "tl::cp_async<" + bytes + ">(" + dst + ", " + src + ")";
    std::string valid = expr(c->args[3]);
    return "tl::cp_async_zfill<" + bytes + ">(" + dst + ", (" + valid + ") ? static_cast<const void*>(" + src +
           ") : static_cast<const void*>(" + buf_name(sb) + "), " + valid + ")";
  }
  if (op == "cuda.cp_async_commit") return "tl::cp_async_commit()";
  if (op == "cuda.cp_async_wait") return "tl::cp_async_wait<" + std::to_string(get_const_int(c->args[0], "wait")) + ">()";
  if (op == "tl.sync_threads") return in_consumer_ ? "tl::sync_block()" : "__syncthreads()";
  if (op == "cuda.sync_all") return "__syncthreads()";
  if (op == "cuda.num_ctas") return "static_cast<int>(gridDim.x)";
  if (op == "cuda.named_barrier_sync") return "tl::named_barrier_sync(" + args_from(0) + ")";
  if (op == "cuda.named_barrier_arrive") return "tl::named_barrier_arrive(" + args_from(0) + ")";
  if (op == "cuda.mbarrier_init")
    return "tl::mbarrier_init(" + address(c->args[0]).first + ", " + expr(c->args[1]) + ")";
  if (op == "cuda.fence_barrier_init") return "tl::fence_barrier_init()";
  if (op == "cuda.mbarrier_wait")
    return "tl::mbarrier_wait(" + address(c->args[0]).first + ", " + expr(c->args[1]) + ")";
  if (op == "cuda.mbarrier_arrive") return "tl::mbarrier_arrive(" + address(c->args[0]).first + ")";
  if (op == "cuda.mbarrier_arrive_warp") return "tl::mbarrier_arrive_warp(" + address(c->args[0]).first + ")";
  if (op == "cuda.mbarrier_expect_tx")
    return "tl::mbarrier_arrive_expect_tx(" + address(c->args[0]).first + ", " + expr(c->args[1]) + ")";
  if (op == "cuda.setmaxnreg_inc" || op == "cuda.setmaxnreg_dec")
    return "tl::setmaxnreg_" + op.substr(op.size() - 3) + "<" + std::to_string(get_const_int(c->args[0], "registers")) +
           ">()";
  if (op == "cuda.tma_load") {
    const TensorMapUse& u = tmaps_[tmap_index(c)];
    const size_t rank = static_cast<size_t>(get_const_int(c->args[4], "rank"));
    const bool multicast = c->args.size() == 6 + 2 * rank;  // the CTA mask comes last
    std::string s = std::string(multicast ? "tl::tma_load_multicast(" : "tl::tma_load(") + u.name + ", " +
                    address(c->args[1]).first + ", " + address(c->args[2]).first;
    if (multicast) s += ", static_cast<unsigned short>(" + expr(c->args.back()) + ")";
    for (size_t i = 0; i < rank; ++i) s += ", " + expr(c->args[5 + rank + i]);
    return s + ")";
  }
  if (op == "cuda.tma_store") {
    const TensorMapUse& u = tmaps_[tmap_index(c)];
    const size_t rank = static_cast<size_t>(get_const_int(c->args[3], "rank"));
    std::string s = "tl::tma_store(" + u.name + ", " + address(c->args[1]).first;
    for (size_t i = 0; i < rank; ++i) s += ", " + expr(c->args[4 + rank + i]);
    return s + ")";
  }
  if (op == "cuda.tma_store_commit") return "tl::tma_store_commit()";
  if (op == "cuda.stmatrix_x4")
    return "tl::stmatrix_x4_cast(" + address(c->args[0]).first + ", " + address(c->args[1]).first + ")";
  if (op == "cuda.tma_store_wait")
    return "tl::tma_store_wait<" + std::to_string(get_const_int(c->args[0], "wait")) + ">()";
  if (op == "cuda.fence_proxy_async") return "tl::fence_proxy_async()";
  if (op == "cuda.cluster_rank") return "tl::cluster_ctarank()";
  if (op == "tl.cluster_sync") return "tl::cluster_sync()";
  if (op == "cuda.mbarrier_arrive_cluster_warps")
    return "tl::mbarrier_arrive_cluster_warps(" + address(c->args[0]).first + ", " + expr(c->args[1]) + ")";
  if (op == "tl.printf") {
    const auto* fmt = c->args.empty() ? nullptr : c->args[0].as<StringImmNode>();
    if (!fmt) throw_error<TypeError>("T.printf: the format must be a string constant");
    std::vector<DataType> types;
    for (size_t i = 1; i < c->args.size(); ++i) types.push_back(c->args[i].dtype());
    // The format is data checked against the arguments (ir/printf_format.h), never the user's text as is.
    PrintfFormat pf = check_printf_format(fmt->value, types);
    std::string s = c_string_literal(pf.format);
    for (size_t i = 1; i < c->args.size(); ++i) {
      std::string v = expr(c->args[i]);
      switch (pf.args[i - 1]) {
        case PrintfArg::kSigned: v = "static_cast<long long>(" + v + ")"; break;
        case PrintfArg::kUnsigned: v = "static_cast<unsigned long long>(" + v + ")"; break;
        case PrintfArg::kChar: v = "static_cast<int>(" + v + ")"; break;
        case PrintfArg::kFloat: v = "static_cast<double>(static_cast<float>(" + v + "))"; break;
        case PrintfArg::kPointer: v = "static_cast<const void*>(" + v + ")"; break;
      }
      s += ", " + v;
    }
    return "printf(" + s + ")";
  }
  if (op == "tl.print_scalar") return "tl::print_value(" + args_from(0) + ")";
  if (op == "tl.device_assert") {
    has_assert_ = true;
    std::string msg = c->args.size() > 1 ? expr(c->args[1]) : "\"\"";
    std::string file = cur_span_.file ? *cur_span_.file : "";
    auto slash = file.rfind('/');
    if (slash != std::string::npos) file = file.substr(slash + 1);
    return "tl::device_assert(" + expr(c->args[0]) + ", " + c_string_literal(file) + ", " + std::to_string(cur_span_.line) +
           ", " + msg + ")";
  }
  if (is_atomic_write_builtin(op) && op != "tl.atomic_store") {  // tl.atomic_<add|max|min|or|and|xor>_scalar
    const auto* l = c->args[0].as<BufferLoadNode>();
    TL_ICHECK(l, op + " needs a load");
    if ((op == "tl.atomic_or_scalar" || op == "tl.atomic_and_scalar" || op == "tl.atomic_xor_scalar") &&
        !l->buffer.dtype().is_integer())
      throw_error<TypeError>("T.", op.substr(3, op.size() - 10), " needs an integer element, got ", l->buffer.dtype().str());
    return "tl::" + op.substr(3, op.size() - 3 - 7) + "(&" + access(l->buffer, l->indices) + ", static_cast<" +
           cuda_type_name(l->buffer.dtype()) + ">(" + expr(c->args[1]) + "))";
  }
  if (op == "tl.atomic_load" || op == "tl.atomic_store") {
    const auto* l = c->args[0].as<BufferLoadNode>();
    TL_ICHECK(l, op + " needs a load");
    std::string order = std::to_string(get_const_int(c->args.back(), "memory order"));
    if (op == "tl.atomic_load") return "tl::atomic_load<" + order + ">(&" + access(l->buffer, l->indices) + ")";
    return "tl::atomic_store<" + order + ">(&" + access(l->buffer, l->indices) + ", static_cast<" +
           cuda_type_name(l->buffer.dtype()) + ">(" + expr(c->args[1]) + "))";
  }
  if (op == "ieee_add" || op == "ieee_mul" || op == "ieee_fmaf" || op == "ieee_fdiv" || op == "ieee_fsqrt") {
    const auto* mode = c->args.back().as<StringImmNode>();
    static const std::map<std::string, int> modes = {{"rn", 0}, {"rz", 1}, {"ru", 2}, {"rd", 3}};
    auto it = mode ? modes.find(mode->value) : modes.end();
    if (it == modes.end()) throw_error<ValueError>("T.", op, ": rounding_mode must be one of rn, rz, ru, rd");
    std::string a;
    for (size_t i = 0; i + 1 < c->args.size(); ++i)
      a += (i ? ", " : "") + std::string("static_cast<float>(") + expr(c->args[i]) + ")";
    return "tl::" + op + "<" + std::to_string(it->second) + ">(" + a + ")";
  }
  if (op.rfind("ascend.", 0) == 0)
    throw_error<ValueError>("T.", op.substr(7), " is an Ascend synchronization primitive; it has no meaning on target cuda");
  throw_error<NotImplemented>("not implemented: call '", op, "' on target cuda");
}

}  // namespace cuda_codegen
}  // namespace tl
