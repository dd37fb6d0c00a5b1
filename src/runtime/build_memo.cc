#include "runtime/build_memo.h"

#include <condition_variable>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "runtime/cache.h"

namespace tl {

namespace {

namespace fs = std::filesystem;

// The remembered artifacts are held in memory (a gemv kernel.so is ~20 KB, a cubin ~10 KB); past
// this many bytes the oldest builds are forgotten.
constexpr size_t kMaxBytes = size_t(256) << 20;

struct Entry {
  bool done = false;
  bool ok = false;
  std::vector<std::pair<std::string, std::string>> files;  // name -> bytes
  size_t bytes = 0;
};

struct Memo {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, std::shared_ptr<Entry>> entries;
  std::list<std::string> order;  // finished entries, oldest first
  size_t bytes = 0;
  size_t builds = 0, reuses = 0;
};

Memo& memo() {
  static Memo* m = new Memo();
  return *m;
}

std::set<std::string> file_names(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec)) out.insert(it->path().filename().string());
  return out;
}

}  // namespace

bool build_once(const std::string& build_key, const std::string& dir,
                const std::function<void(const std::string& dir)>& build) {
  Memo& m = memo();
  std::shared_ptr<Entry> entry;
  {
    std::unique_lock<std::mutex> lock(m.mu);
    for (;;) {
      auto it = m.entries.find(build_key);
      if (it == m.entries.end()) {
        entry = std::make_shared<Entry>();
        m.entries[build_key] = entry;
        ++m.builds;
        break;
      }
      std::shared_ptr<Entry> other = it->second;
      m.cv.wait(lock, [&] { return other->done; });
      if (other->ok) {
        ++m.reuses;
        std::vector<std::pair<std::string, std::string>> files = other->files;
        lock.unlock();
        for (auto& [name, bytes] : files) write_text_file(dir + "/" + name, bytes);
        return true;
      }
      // That build failed and was forgotten: look again (another thread may have started anew).
    }
  }

  std::set<std::string> before = file_names(dir);
  auto finish = [&](bool ok) {
    std::lock_guard<std::mutex> lock(m.mu);
    entry->done = true;
    entry->ok = ok;
    auto it = m.entries.find(build_key);
    const bool current = it != m.entries.end() && it->second == entry;  // not cleared meanwhile
    if (current && !ok) m.entries.erase(it);
    if (current && ok) {
      m.order.push_back(build_key);
      m.bytes += entry->bytes;
      while (m.bytes > kMaxBytes && m.order.size() > 1) {
        auto old = m.entries.find(m.order.front());
        if (old != m.entries.end()) {
          m.bytes -= old->second->bytes;
          m.entries.erase(old);
        }
        m.order.pop_front();
      }
    }
    m.cv.notify_all();
  };
  try {
    build(dir);
    for (const std::string& name : file_names(dir)) {
      if (before.count(name)) continue;
      std::string bytes = read_text_file(dir + "/" + name);
      entry->bytes += bytes.size();
      entry->files.emplace_back(name, std::move(bytes));
    }
  } catch (...) {
    finish(false);
    throw;
  }
  finish(true);
  return false;
}

BuildMemoStats build_memo_stats() {
  Memo& m = memo();
  std::lock_guard<std::mutex> lock(m.mu);
  BuildMemoStats s;
  s.builds = m.builds;
  s.reuses = m.reuses;
  s.entries = m.entries.size();
  return s;
}

void clear_build_memo() {
  Memo& m = memo();
  std::lock_guard<std::mutex> lock(m.mu);
  // In-flight builds keep their entries (shared_ptr) and finish without re-registering; waiters
  // hold theirs too.
  m.entries.clear();
  m.order.clear();
  m.bytes = 0;
}

}  // namespace tl
