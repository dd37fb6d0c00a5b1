// Structural equality, hashing and diffing of the IR, modulo names.
//
// Two pieces of IR are structurally equal when they have the same shape, kinds, dtypes,
// constants, loop kinds, scopes and attributes, and their variables and buffers correspond
// one-to-one by *definition*:
//   - a variable bound by a for/let/kernel (or a function parameter / dynamic dim) matches the
//     variable bound at the corresponding place on the other side, whatever the names;
//   - a buffer defined by a parameter or an alloc matches the corresponding one (its dtype,
//     scope, shape and strides are compared at the definition);
//   - a free variable/buffer (used but not defined) matches only itself, unless
//     `map_free_vars` is set: then free ones are paired one-to-one on first encounter (and
//     free buffers' declarations compared). Functions always map free symbols.
// Ignored: names of variables, buffers, parameters and the function; spans; how statement
// sequences are nested (Seq[a, Seq[b, c]] == Seq[a, b, c], Seq[a] == a, an undefined statement
// == an empty sequence). Float constants compare by bit pattern, except that NaN equals NaN.
//
// The hash is consistent with equality: names and spans do not enter it, definition order does.
#pragma once

#include <cstdint>
#include <string>

#include "ir/stmt.h"

namespace tl {

bool structural_equal(const PrimFunc& a, const PrimFunc& b);
bool structural_equal(const Stmt& a, const Stmt& b, bool map_free_vars = false);
bool structural_equal(const Expr& a, const Expr& b, bool map_free_vars = false);

uint64_t structural_hash(const PrimFunc& f);
uint64_t structural_hash(const Stmt& s);
uint64_t structural_hash(const Expr& e);

// "" when equal; otherwise the first mismatch, for test failure messages:
//   mismatch at body[1].for.body.store.value.b: integer constants differ (1 vs 2)
//     lhs: 1
//     rhs: 2
//   in statement
//     lhs: A[i] = B[i] + 1
//     rhs: A[i] = B[i] + 2
std::string structural_diff(const PrimFunc& a, const PrimFunc& b);
std::string structural_diff(const Stmt& a, const Stmt& b, bool map_free_vars = false);
std::string structural_diff(const Expr& a, const Expr& b, bool map_free_vars = false);

}  // namespace tl
