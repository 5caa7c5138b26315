#pragma once
// A Storage is a refcounted block of memory on one device; tensors are views onto it. Its memory
// comes from the device's Allocator (alloc/allocator.h), or from elsewhere (NumPy, DLPack, shared
// memory) with its own deleter.
#include <cstddef>

#include "ember/alloc/allocator.h"
#include "ember/core/device.h"
#include "ember/core/intrusive_ptr.h"

namespace ember {

class EMBER_API StorageImpl : public RefCounted {
 public:
  using Deleter = DataPtr::Deleter;
  // Owned memory from the device's allocator.
  static intrusive_ptr<StorageImpl> allocate(size_t nbytes, Device device = Device());
  // Owned memory from a given allocator (pinned host memory), resizable through it.
  static intrusive_ptr<StorageImpl> allocate(size_t nbytes, Allocator* allocator, Device device);
  // Foreign memory: `deleter(ctx, data, nbytes)` runs when the last reference goes.
  static intrusive_ptr<StorageImpl> wrap(void* data, size_t nbytes, Deleter deleter, void* ctx,
                                         Device device = Device());
  ~StorageImpl() override;

  void* data() const { return mem_.data; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return mem_.device; }
  // Memory from the device's allocator (resizable), not foreign memory.
  bool owns_memory() const { return allocator_ != nullptr; }
  // Replace the memory (resize_ of an owned storage); keeps the same StorageImpl.
  void reset_memory(size_t nbytes);
  // Swap in foreign memory of the same size (share_memory_()); frees the old memory.
  void replace_memory(void* data, Deleter deleter, void* ctx);
  Deleter deleter() const { return mem_.deleter; }
  void* deleter_ctx() const { return mem_.ctx; }

 private:
  StorageImpl() = default;
  void free_memory();
  DataPtr mem_;
  size_t nbytes_ = 0;
  Allocator* allocator_ = nullptr;  // who allocated mem_; null for foreign memory
};

using Storage = intrusive_ptr<StorageImpl>;

}  // namespace ember
