#include "ember/core/storage.h"

#include <algorithm>

#include "ember/core/error.h"
#include "ember/core/macros.h"

namespace ember {

intrusive_ptr<StorageImpl> StorageImpl::allocate(size_t nbytes, Device device) {
  if (EMBER_LIKELY(device.is_cpu())) {  // the per-op path: what CpuAllocator::allocate does, inline
    auto s = intrusive_ptr<StorageImpl>::adopt(new StorageImpl());
    s->mem_ = {cpu_alloc(nbytes), nullptr, &cpu_deleter, device};
    s->nbytes_ = nbytes;
    s->allocator_ = cpu_allocator();
    return s;
  }
  Allocator* a = get_allocator(device.type);  // raises for a device type with no backend
  auto s = intrusive_ptr<StorageImpl>::adopt(new StorageImpl());
  s->mem_ = a->allocate_on(nbytes, device);  // "cuda" becomes the current device's index
  s->nbytes_ = nbytes;
  s->allocator_ = a;
  return s;
}

intrusive_ptr<StorageImpl> StorageImpl::allocate(size_t nbytes, Allocator* allocator, Device device) {
  auto s = intrusive_ptr<StorageImpl>::adopt(new StorageImpl());
  s->mem_ = allocator->allocate_on(nbytes, device);
  s->nbytes_ = nbytes;
  s->allocator_ = allocator;
  return s;
}

intrusive_ptr<StorageImpl> StorageImpl::wrap(void* data, size_t nbytes, Deleter deleter, void* ctx, Device device) {
  auto s = intrusive_ptr<StorageImpl>::adopt(new StorageImpl());
  s->mem_ = {data, ctx, deleter, device};
  s->nbytes_ = nbytes;
  return s;
}

StorageImpl::~StorageImpl() { free_memory(); }

void StorageImpl::free_memory() {
  if (mem_.deleter) mem_.deleter(mem_.ctx, mem_.data, nbytes_);
}

void StorageImpl::replace_memory(void* data, Deleter deleter, void* ctx) {
  free_memory();
  mem_.data = data;
  mem_.deleter = deleter;
  mem_.ctx = ctx;
  allocator_ = nullptr;
}

void StorageImpl::reset_memory(size_t nbytes) {
  EMBER_CHECK(owns_memory(), "Trying to resize storage that is not resizable");
  DataPtr fresh = allocator_->allocate_on(nbytes, mem_.device);
  if (mem_.data && fresh.data)
    allocator_->copy_data(fresh.data, fresh.device, mem_.data, mem_.device, std::min(nbytes, nbytes_), false);
  free_memory();
  mem_ = fresh;
  nbytes_ = nbytes;
}

}  // namespace ember
