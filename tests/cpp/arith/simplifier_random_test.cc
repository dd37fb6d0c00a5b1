// Randomized proof that the simplifier never changes a value: random integer expression trees
// (linear arithmetic, div/mod by constants of both signs, min/max, select, comparisons, logic)
// over variables with random ranges are simplified under those ranges and evaluated, original
// and simplified, at random points of the ranges.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>

#include "arith/analyzer.h"
#include "ir/eval.h"
#include "ir/error.h"
#include "ir/printer.h"

namespace tl {
namespace {

struct VarSpec {
  Var var;
  int64_t lo, extent;
};

class ExprGen {
 public:
  ExprGen(uint64_t seed, const std::vector<VarSpec>& vars) : rng_(seed), vars_(vars) {}

  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(int percent) { return uniform(0, 99) < percent; }

  Expr leaf(DataType t) {
    if (chance(70)) {
      const VarSpec& v = vars_[uniform(0, vars_.size() - 1)];
      return t == v.var.dtype() ? Expr(v.var) : make_cast(t, v.var);
    }
    return make_int(t.is_uint() ? uniform(0, 40) : uniform(-20, 20), t);
  }

  int64_t divisor(DataType t = DataType::Int32()) {
    int64_t d = chance(80) || t.is_uint() ? uniform(1, 16) : -uniform(1, 9);
    if (chance(30)) d = int64_t(1) << uniform(1, 5);
    return d;
  }

  Expr int_expr(int depth, DataType t = DataType::Int32()) {
    if (depth <= 0 || chance(15)) return leaf(t);
    switch (uniform(0, 13)) {
      case 0:
      case 1: return int_expr(depth - 1, t) + int_expr(depth - 1, t);
      case 2: return int_expr(depth - 1, t) - int_expr(depth - 1, t);
      case 3: return int_expr(depth - 1, t) * make_int(t.is_uint() ? uniform(0, 8) : uniform(-8, 8), t);
      case 4: return chance(70) ? int_expr(depth - 1, t) * make_int(uniform(2, 16), t) : leaf(t) * leaf(t);
      case 5: {
        static const BinOp ops[] = {BinOp::kFloorDiv, BinOp::kFloorMod, BinOp::kDiv, BinOp::kMod};
        return make_binary(ops[uniform(0, 3)], int_expr(depth - 1, t), make_int(divisor(t), t));
      }
      case 6: return floordiv(int_expr(depth - 1, t) * make_int(uniform(1, 8), t) + int_expr(depth - 1, t), make_int(divisor(t), t));
      case 7: return floormod(int_expr(depth - 1, t) * make_int(uniform(1, 8), t) + int_expr(depth - 1, t), make_int(divisor(t), t));
      case 8: return make_binary(chance(50) ? BinOp::kMin : BinOp::kMax, int_expr(depth - 1, t), int_expr(depth - 1, t));
      case 9: return make_select(bool_expr(depth - 1), int_expr(depth - 1, t), int_expr(depth - 1, t));
      case 10: return -int_expr(depth - 1, t);
      case 11: {
        // div/mod identity shapes: floordiv(e, c) * c + floormod(e, c)
        Expr e = int_expr(depth - 1, t);
        int64_t c = divisor(t);
        bool trunc = chance(30);
        Expr q = make_binary(trunc ? BinOp::kDiv : BinOp::kFloorDiv, e, make_int(c, t));
        Expr r = make_binary(trunc ? BinOp::kMod : BinOp::kFloorMod, e, make_int(c, t));
        return q * make_int(c, t) + r + (chance(50) ? int_expr(depth - 1, t) : make_int(0, t));
      }
      case 12: {
        // A symbolic divisor (a variable, maybe zero at some points: those are skipped when the
        // original divides by zero, and must not fail in the simplified form otherwise).
        Expr d = leaf(t);
        static const BinOp ops[] = {BinOp::kFloorDiv, BinOp::kFloorMod, BinOp::kDiv, BinOp::kMod};
        Expr num = chance(50) ? int_expr(depth - 1, t) * d + int_expr(depth - 1, t) : int_expr(depth - 1, t);
        return make_binary(ops[uniform(0, 3)], num, d);
      }
      default: {
        Expr e = int_expr(depth - 1, DataType::Int64());
        return t == DataType::Int64() ? e : make_cast(t, e);
      }
    }
  }

  Expr bool_expr(int depth) {
    if (depth <= 0 || chance(10)) return chance(50) ? make_bool(chance(50)) : compare(0);
    switch (uniform(0, 5)) {
      case 0:
      case 1:
      case 2: return compare(depth - 1);
      case 3: return bool_expr(depth - 1) && bool_expr(depth - 1);
      case 4: return bool_expr(depth - 1) || bool_expr(depth - 1);
      default: return make_unary(UnOp::kNot, bool_expr(depth - 1));
    }
  }

  Expr compare(int depth) {
    static const BinOp ops[] = {BinOp::kLT, BinOp::kLE, BinOp::kGT, BinOp::kGE, BinOp::kEQ, BinOp::kNE};
    return make_binary(ops[uniform(0, 5)], int_expr(depth), int_expr(depth));
  }

 private:
  std::mt19937_64 rng_;
  const std::vector<VarSpec>& vars_;
};

struct Stats {
  int cases = 0, points = 0, changed = 0, skipped = 0, not_idempotent = 0;
};

// Options of one run: symbolic ranges (y in [x + lo, x + lo + extent)) and an assumed condition.
struct Mode {
  bool symbolic_ranges = false;
  bool assumptions = false;
  bool lets = false;  // the last variable (of two or more) is a let: z = x * lo + extent
  // Expressions of uint8/int8/int16/uint32: integers that wrap (not index types). Every point
  // counts, overflowing or not: the simplifier may not rely on "no overflow" for them.
  bool narrow = false;
};

// The let value of the last variable in `lets` mode (lo and extent double as its coefficients).
Expr let_value(const std::vector<VarSpec>& vars) {
  const VarSpec& v = vars.back();
  return vars[0].var * make_int(v.lo % 5) + make_int(v.extent);
}
bool has_let(const std::vector<VarSpec>& vars, const Mode& mode) { return mode.lets && vars.size() > 1; }

void bind_all(Analyzer& an, const std::vector<VarSpec>& vars, const Mode& mode) {
  for (size_t i = 0; i < vars.size(); ++i) {
    const VarSpec& v = vars[i];
    if (has_let(vars, mode) && i + 1 == vars.size()) {
      an.bind(v.var, let_value(vars));
      continue;
    }
    Expr lo = make_int(v.lo);
    if (mode.symbolic_ranges && i > 0) lo = vars[0].var + lo;
    an.bind(v.var, Range(lo, make_int(v.extent)));
  }
}

void check_equivalent(uint64_t seed, int num_cases, const Mode& mode, Stats* stats) {
  std::mt19937_64 rng(seed * 7919 + 1);
  auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int c = 0; c < num_cases; ++c) {
    std::vector<VarSpec> vars;
    int nvars = static_cast<int>(uni(1, 3));
    static const char* names[] = {"x", "y", "z"};
    for (int i = 0; i < nvars; ++i) {
      bool nonneg = uni(0, 1) == 0;
      vars.push_back(VarSpec{Var(names[i]), nonneg ? 0 : uni(-24, 24), uni(1, 40)});
    }
    ExprGen gen(seed * 1000003 + c, vars);
    static const DataType narrow_types[] = {DataType::UInt(8), DataType::Int(8), DataType::Int(16), DataType::UInt(32)};
    Expr e = mode.narrow ? gen.int_expr(uni(1, 4), narrow_types[uni(0, 3)])
                         : (uni(0, 3) == 0 ? gen.bool_expr(3) : gen.int_expr(uni(1, 4)));
    Expr assumed = mode.assumptions ? gen.compare(1) : make_bool(true);
    Analyzer an;
    bind_all(an, vars, mode);
    Expr s;
    {
      auto scope = an.assume(assumed);
      s = an.simplify(e);
    }
    ASSERT_EQ(s.dtype(), e.dtype()) << print_expr(e) << "  ->  " << print_expr(s);
    ++stats->cases;
    if (print_expr(s) != print_expr(e)) ++stats->changed;
    {
      Analyzer fresh;
      bind_all(fresh, vars, mode);
      auto scope = fresh.assume(assumed);
      Expr s2 = fresh.simplify(s);
      if (print_expr(s2) != print_expr(s)) {
        ++stats->not_idempotent;
        if (stats->not_idempotent < 10)
          std::printf("not idempotent: %s\n  -> %s\n  -> %s\n", print_expr(e).c_str(), print_expr(s).c_str(),
                      print_expr(s2).c_str());
      }
    }
    for (int p = 0; p < 16; ++p) {
      std::map<Var, Value, VarLess> env;
      for (size_t i = 0; i < vars.size(); ++i) {
        if (has_let(vars, mode) && i + 1 == vars.size()) {
          env[vars[i].var] = eval_expr(let_value(vars), env);
          continue;
        }
        int64_t lo = vars[i].lo + (mode.symbolic_ranges && i > 0 ? env[vars[0].var].i : 0);
        env[vars[i].var] = Value::from_int(lo + uni(0, vars[i].extent - 1));
      }
      bool holds = false;
      try {
        holds = eval_expr(assumed, env).as_bool();
      } catch (const Error&) {  // the assumption itself divides by zero here
      }
      if (!holds) {
        ++stats->skipped;
        continue;
      }
      bool overflow = false;
      EvalEnv ev;
      ev.vars = env;
      ev.signed_overflow = &overflow;
      Value want;
      try {
        want = eval_expr(e, ev);
      } catch (const Error&) {
        ++stats->skipped;  // e.g. a division by a (folded) zero in the original
        continue;
      }
      if (overflow && !mode.narrow) {
        ++stats->skipped;
        continue;
      }
      Value got;
      try {
        got = eval_expr(s, env);
      } catch (const Error& err) {
        FAIL() << "simplified expression fails to evaluate: " << err.what() << "\n  original:   " << print_expr(e)
               << "\n  simplified: " << print_expr(s);
      }
      ++stats->points;
      if (!same_value(want, got)) {
        std::string at;
        for (auto& v : vars) at += " " + v.var.name() + "=" + std::to_string(env[v.var].i);
        FAIL() << "value changed at" << at << " assuming " << print_expr(assumed) << "\n  original:   " << print_expr(e)
               << " = " << want.str() << "\n  simplified: " << print_expr(s) << " = " << got.str();
      }
    }
  }
}

void run_mode(const Mode& mode, const char* name) {
  auto t0 = std::chrono::steady_clock::now();
  Stats stats;
  // TL_ARITH_FUZZ_SEEDS=n runs n seeds (1000 cases each) instead of 3, for longer fuzzing.
  uint64_t seeds = 3;
  if (const char* env = std::getenv("TL_ARITH_FUZZ_SEEDS")) seeds = std::max<uint64_t>(1, std::strtoull(env, nullptr, 10));
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    check_equivalent(seed, 1000, mode, &stats);
    if (::testing::Test::HasFatalFailure()) return;
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // The test must exercise the simplifier: most cases change and most points count.
  EXPECT_EQ(stats.cases, static_cast<int>(seeds) * 1000);
  EXPECT_GT(stats.changed, stats.cases / (mode.narrow ? 4 : 2));
  EXPECT_GT(stats.points, stats.cases * (mode.assumptions ? 5 : 12));
  EXPECT_LT(stats.not_idempotent, stats.cases / 100);
  std::printf("[random simplify, %s] %d cases (%d rewritten, %d not idempotent), %d points checked, %d skipped, %.0f ms\n",
              name, stats.cases, stats.changed, stats.not_idempotent, stats.points, stats.skipped, ms);
}

TEST(SimplifierRandom, NeverChangesAValue) { run_mode(Mode{}, "constant ranges"); }

TEST(SimplifierRandom, SymbolicRanges) { run_mode(Mode{true, false}, "symbolic ranges"); }

TEST(SimplifierRandom, UnderAssumptions) { run_mode(Mode{false, true}, "assumed condition"); }

TEST(SimplifierRandom, LetBoundVariables) { run_mode(Mode{true, false, true}, "let-bound variables"); }

TEST(SimplifierRandom, WrappingIntegerTypes) { run_mode(Mode{false, false, false, true}, "uint8/int8/int16/uint32"); }

}  // namespace
}  // namespace tl
