#pragma once
// A Storage is a refcounted block of memory; tensors are views onto it.
// Memory from elsewhere (NumPy, DLPack, shared memory) comes with its own deleter.
#include <cstddef>

#include "ember/core/device.h"
#include "ember/core/intrusive_ptr.h"

namespace ember {

class StorageImpl : public RefCounted {
 public:
  using Deleter = void (*)(void* ctx, void* data, size_t nbytes);
  // Owned CPU memory from the Ember allocator.
  static intrusive_ptr<StorageImpl> allocate(size_t nbytes, Device device = Device());
  // Foreign memory: `deleter(ctx, data, nbytes)` runs when the last reference goes.
  static intrusive_ptr<StorageImpl> wrap(void* data, size_t nbytes, Deleter deleter, void* ctx,
                                         Device device = Device());
  ~StorageImpl() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  bool owns_memory() const { return deleter_ == nullptr; }
  // Replace the memory (resize_ of an owned storage); keeps the same StorageImpl.
  void reset_memory(size_t nbytes);
  // Swap in foreign memory of the same size (share_memory_()); frees the old memory.
  void replace_memory(void* data, Deleter deleter, void* ctx);
  Deleter deleter() const { return deleter_; }
  void* deleter_ctx() const { return ctx_; }

 private:
  StorageImpl() = default;
  void free_memory();
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Deleter deleter_ = nullptr;  // nullptr: memory from cpu_alloc
  void* ctx_ = nullptr;
};

using Storage = intrusive_ptr<StorageImpl>;

}  // namespace ember
