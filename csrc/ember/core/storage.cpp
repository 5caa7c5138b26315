#include "ember/core/storage.h"

#include <cstring>

#include "ember/alloc/allocator.h"
#include "ember/core/error.h"

namespace ember {

intrusive_ptr<StorageImpl> StorageImpl::allocate(size_t nbytes, Device device) {
  device.check_available();
  auto s = intrusive_ptr<StorageImpl>::adopt(new StorageImpl());
  s->data_ = cpu_alloc(nbytes);
  s->nbytes_ = nbytes;
  s->device_ = device;
  return s;
}

intrusive_ptr<StorageImpl> StorageImpl::wrap(void* data, size_t nbytes, Deleter deleter, void* ctx, Device device) {
  auto s = intrusive_ptr<StorageImpl>::adopt(new StorageImpl());
  s->data_ = data;
  s->nbytes_ = nbytes;
  s->deleter_ = deleter;
  s->ctx_ = ctx;
  s->device_ = device;
  return s;
}

StorageImpl::~StorageImpl() { free_memory(); }

void StorageImpl::free_memory() {
  if (deleter_) deleter_(ctx_, data_, nbytes_);
  else cpu_free(data_, nbytes_);
}

void StorageImpl::replace_memory(void* data, Deleter deleter, void* ctx) {
  free_memory();
  data_ = data;
  deleter_ = deleter;
  ctx_ = ctx;
}

void StorageImpl::reset_memory(size_t nbytes) {
  EMBER_CHECK(owns_memory(), "Trying to resize storage that is not resizable");
  void* p = cpu_alloc(nbytes);
  if (data_ && p) std::memcpy(p, data_, std::min(nbytes, nbytes_));
  cpu_free(data_, nbytes_);
  data_ = p;
  nbytes_ = nbytes;
}

}  // namespace ember
