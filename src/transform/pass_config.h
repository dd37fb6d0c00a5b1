// The pass-configuration keys accepted by tilelang.compile(pass_configs=...). This table is the
// single source of truth: Python's tilelang.PassConfigKey is generated from it.
#pragma once

#include <string>
#include <vector>

#include "ir/buffer.h"

namespace tl {

struct PassConfigKeyInfo {
  const char* member;  // Python enum member name, e.g. "TL_ASCEND_AUTO_SYNC"
  const char* key;     // string value, e.g. "tl.ascend_auto_sync"
  Attr::Kind type;     // kBool, kInt or kStr
  const char* doc;
};

const std::vector<PassConfigKeyInfo>& pass_config_keys();

// Checks every key is known and every value has the key's type (bools also accept 0/1).
// Unknown keys raise ValueError listing the accepted ones; the returned map is normalized.
AttrMap validate_pass_configs(const AttrMap& configs);

// Typed lookups with defaults (the map is assumed validated).
bool config_bool(const AttrMap& configs, const std::string& key, bool dflt = false);
int64_t config_int(const AttrMap& configs, const std::string& key, int64_t dflt);

}  // namespace tl
