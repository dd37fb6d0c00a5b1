// CudaLaunchInfo (codegen.h) as text: written next to a kernel in the cache and read back when the
// cached kernel is loaded, so a cache hit launches without compiling again.
#include <sstream>

#include "ir/error.h"
#include "target/cuda/codegen.h"

namespace tl {

std::string CudaLaunchInfo::serialize() const {
  std::ostringstream os;
  for (const CudaLaunchInfo& next : then) TL_ICHECK(next.then.empty(), "nested launch descriptions");
  os << "kernel " << kernel_name << "\n";
  for (const std::string& g : grid) os << "grid " << g << "\n";
  os << "block " << block[0] << " " << block[1] << " " << block[2] << "\n";
  os << "smem " << dyn_smem_bytes << "\n";
  os << "assert " << (has_device_assert ? 1 : 0) << "\n";
  if (persistent) os << "persistent 1\n";
  if (distributed) os << "dist 1\n";
  for (const Param& p : params) os << "param " << p.kind << " " << p.name << " " << p.source << "\n";
  for (const TensorMap& m : tensor_maps) {
    os << "tmap " << m.name << " " << m.param << " " << m.dtype << " " << m.swizzle << " " << m.box.size();
    for (int64_t b : m.box) os << " " << b;
    os << "\n";
    for (const std::string& d : m.dims) os << "tmap_dim " << d << "\n";
    for (const std::string& st : m.strides) os << "tmap_stride " << st << "\n";
  }
  for (const CudaLaunchInfo& next : then) os << "then\n" << next.serialize();
  return os.str();
}

CudaLaunchInfo CudaLaunchInfo::parse(const std::string& text) {
  // "then" starts the description of the next kernel.
  size_t cut = text.find("then\n");
  if (cut != std::string::npos && (cut == 0 || text[cut - 1] == '\n')) {
    CudaLaunchInfo first = parse(text.substr(0, cut));
    CudaLaunchInfo rest = parse(text.substr(cut + 5));
    first.then.push_back(rest);
    for (CudaLaunchInfo& r : rest.then) first.then.push_back(r);
    first.then[0].then.clear();
    return first;
  }
  CudaLaunchInfo info;
  info.grid.clear();
  std::istringstream is(text);
  for (std::string ln; std::getline(is, ln);) {
    std::istringstream ls(ln);
    std::string key;
    ls >> key;
    if (key == "kernel") {
      ls >> info.kernel_name;
    } else if (key == "grid") {
      std::string rest;
      std::getline(ls, rest);
      info.grid.push_back(rest.substr(rest.find_first_not_of(' ')));
    } else if (key == "block") {
      ls >> info.block[0] >> info.block[1] >> info.block[2];
    } else if (key == "smem") {
      ls >> info.dyn_smem_bytes;
    } else if (key == "assert") {
      int a = 0;
      ls >> a;
      info.has_device_assert = a != 0;
    } else if (key == "dist") {
      int v = 0;
      ls >> v;
      info.distributed = v != 0;
    } else if (key == "persistent") {
      int v = 0;
      ls >> v;
      info.persistent = v != 0;
    } else if (key == "param") {
      Param p;
      ls >> p.kind >> p.name >> p.source;
      info.params.push_back(p);
    } else if (key == "tmap") {
      TensorMap m;
      size_t rank = 0;
      ls >> m.name >> m.param >> m.dtype >> m.swizzle >> rank;
      if (!ls || rank < 1 || rank > 5) throw_error<ValueError>("corrupt cuda launch description (line '", ln, "')");
      m.box.resize(rank);
      for (int64_t& b : m.box) ls >> b;
      info.tensor_maps.push_back(m);
    } else if (key == "tmap_dim" || key == "tmap_stride") {
      std::string rest;
      std::getline(ls, rest);
      if (info.tensor_maps.empty() || rest.find_first_not_of(' ') == std::string::npos)
        throw_error<ValueError>("corrupt cuda launch description (line '", ln, "')");
      (key == "tmap_dim" ? info.tensor_maps.back().dims : info.tensor_maps.back().strides)
          .push_back(rest.substr(rest.find_first_not_of(' ')));
    } else if (!key.empty()) {
      throw_error<ValueError>("corrupt cuda launch description (line '", ln, "')");
    }
  }
  if (info.kernel_name.empty() || info.grid.size() != 3)
    throw_error<ValueError>("corrupt cuda launch description: missing kernel name or grid");
  return info;
}

}  // namespace tl
