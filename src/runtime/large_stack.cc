#include "runtime/large_stack.h"

#include <pthread.h>

#include <exception>

namespace tl {

void run_with_large_stack(const std::function<void()>& fn, size_t stack_bytes) {
  struct Job {
    const std::function<void()>* fn;
    std::exception_ptr error;
  } job{&fn, nullptr};
  auto body = [](void* p) -> void* {
    auto* j = static_cast<Job*>(p);
    try {
      (*j->fn)();
    } catch (...) {
      j->error = std::current_exception();
    }
    return nullptr;
  };
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  int rc = pthread_create(&thread, &attr, body, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    fn();
    return;
  }
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace tl
