// ember._C._shm_*: the primitives behind Tensor.share_memory_() and ember.multiprocessing's
// reducers (move a storage into shared memory, describe it, map it again in another process).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "ember/alloc/shared_memory.h"
#include "python/arg_parser.h"
#include "python/bindings.h"

namespace nb = nanobind;

namespace ember::py {

namespace {

shm::Kind parse_kind(const std::string& s) {
  if (s == "file_descriptor") return shm::Kind::kFd;
  if (s == "file_system") return shm::Kind::kFile;
  EMBER_CHECK_KIND(false, Value, "unknown sharing strategy '", s, "'");
  return shm::Kind::kNone;
}

// A tensor of the given geometry on `storage`, checked to lie inside it.
nb::object view_of(Storage storage, nb::handle dtype, const std::vector<int64_t>& sizes,
                   const std::vector<int64_t>& strides, int64_t offset) {
  ScalarType dt = unpack_dtype(dtype.ptr());
  EMBER_CHECK(sizes.size() == strides.size() && offset >= 0, "shared tensor: inconsistent sizes/strides/offset");
  int64_t last = offset;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); i++) {
    EMBER_CHECK(sizes[i] >= 0 && strides[i] >= 0, "shared tensor: negative size or stride");
    if (sizes[i] == 0) empty = true;
    else last += (sizes[i] - 1) * strides[i];
  }
  EMBER_CHECK(empty || (last + 1) * int64_t(itemsize(dt)) <= int64_t(storage->nbytes()),
              "shared tensor: the view reaches past the end of its ", storage->nbytes(), "-byte storage");
  return nb::steal(wrap(Tensor(make_intrusive<TensorImpl>(std::move(storage), dt, sizes, strides, offset))));
}

}  // namespace

void bind_shm(nb::module_& m) {
  m.def("_shm_share", [](const Tensor& t, const std::string& strategy) {
    shm::share(*t.impl()->storage(), parse_kind(strategy));
  });
  m.def("_shm_strategy_of", [](const Tensor& t) -> nb::object {
    switch (shm::kind_of(*t.impl()->storage())) {
      case shm::Kind::kFd: return nb::str("file_descriptor");
      case shm::Kind::kFile: return nb::str("file_system");
      default: return nb::none();
    }
  });
  m.def("_shm_fd", [](const Tensor& t) { return shm::fd_of(*t.impl()->storage()); });
  m.def("_shm_name", [](const Tensor& t) { return shm::name_of(*t.impl()->storage()); });
  m.def("_shm_add_ref", [](const Tensor& t) { shm::add_ref(*t.impl()->storage()); });
  m.def("_shm_release_ref", &shm::release_file_ref);
  m.def("_shm_storage_key", [](const Tensor& t) { return uintptr_t(t.impl()->storage().get()); });
  m.def("_shm_rebuild_fd", [](int fd, size_t nbytes, nb::handle dtype, const std::vector<int64_t>& sizes,
                              const std::vector<int64_t>& strides, int64_t offset) {
    return view_of(shm::open_fd(fd, nbytes), dtype, sizes, strides, offset);
  });
  m.def("_shm_rebuild_file", [](const std::string& name, size_t nbytes, bool adopt, nb::handle dtype,
                                const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                                int64_t offset) {
    return view_of(shm::open_file(name, nbytes, adopt), dtype, sizes, strides, offset);
  });
  m.def("_shm_empty", [](const std::string& strategy, nb::handle dtype, const std::vector<int64_t>& sizes) {
    int64_t numel = 1;
    for (int64_t n : sizes) numel *= n;
    std::vector<int64_t> strides(sizes.size());
    for (int64_t i = int64_t(sizes.size()) - 1, st = 1; i >= 0; st *= std::max<int64_t>(sizes[size_t(i)], 1), i--)
      strides[size_t(i)] = st;
    size_t nbytes = size_t(numel) * itemsize(unpack_dtype(dtype.ptr()));
    return view_of(shm::allocate(nbytes, parse_kind(strategy)), dtype, sizes, strides, 0);
  });
  // another view of a storage this process already mapped (two tensors of one storage stay aliased)
  m.def("_shm_view_like", [](const Tensor& base, nb::handle dtype, const std::vector<int64_t>& sizes,
                             const std::vector<int64_t>& strides, int64_t offset) {
    return view_of(base.impl()->storage(), dtype, sizes, strides, offset);
  });
  m.def("_shm_set_tracker_fd", &shm::set_tracker_fd);
  m.def("_shm_live_mappings", &shm::live_mappings);
}

}  // namespace ember::py
