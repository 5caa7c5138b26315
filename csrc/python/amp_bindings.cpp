// Python side of autocast (ember/autograd/autocast.h): the thread's state per device type, read and
// set by ember.amp's torch.* functions (is_autocast_enabled, set_autocast_dtype, ...). Device types
// arrive as autocast::Device's index; ember/amp/_state.py parses the device strings.
#include <nanobind/nanobind.h>

#include "ember/autograd/autocast.h"
#include "ember/core/error.h"
#include "python/arg_parser.h"
#include "python/bindings.h"

namespace nb = nanobind;

namespace ember::py {

namespace {

autocast::Device device_of(int index) {
  EMBER_CHECK_KIND(index >= 0 && index < int(autocast::Device::Count), Value, "autocast: no device type ", index);
  return autocast::Device(index);
}

}  // namespace

void bind_amp(nb::module_& m) {
  m.def("_autocast_is_enabled", [](int d) { return autocast::is_enabled(device_of(d)); });
  m.def("_autocast_set_enabled", [](int d, bool enabled) { autocast::set_enabled(device_of(d), enabled); });
  m.def("_autocast_get_dtype", [](int d) { return nb::borrow(wrap_dtype(autocast::get_dtype(device_of(d)))); });
  m.def("_autocast_set_dtype", [](int d, nb::handle dtype) {
    if (!is_dtype(dtype.ptr())) EMBER_FAIL(Type, "set_autocast_dtype(): dtype must be a torch.dtype");
    autocast::set_dtype(device_of(d), unpack_dtype(dtype.ptr()));
  });
  m.def("_autocast_is_cache_enabled", &autocast::is_cache_enabled);
  m.def("_autocast_set_cache_enabled", &autocast::set_cache_enabled);
  m.def("_autocast_increment_nesting", &autocast::increment_nesting);
  m.def("_autocast_decrement_nesting", &autocast::decrement_nesting);
  m.def("_autocast_clear_cache", &autocast::clear_cache);

  // For the Python-level composites that PyTorch runs as one autocast op (ember/amp/_ops.py): whether
  // autocast applies now, the casts of a policy over the tensors of one call, and suspension of
  // autocast for the composite's body.
  m.def("_autocast_cpu_active", [] { return autocast::maybe_active() && autocast::cpu_active(); });
  m.def("_autocast_cast", [](int policy, nb::handle tensors) {
    EMBER_CHECK_KIND(policy >= 0 && policy <= int(autocast::Policy::Disabled), Value, "autocast: no policy ", policy);
    std::vector<Tensor> ts;
    for (nb::handle h : tensors) ts.push_back(unpack(h.ptr()));
    nb::list out;
    autocast::Redispatch cast(autocast::Policy(policy), autocast::Device::CPU, {}, {&ts});
    for (const Tensor& t : ts) out.append(nb::steal(wrap(cast.cast(t))));
    return out;
  });
  m.def("_autocast_suspend", &autocast::suspend);
  m.def("_autocast_resume", &autocast::resume);
}

}  // namespace ember::py
