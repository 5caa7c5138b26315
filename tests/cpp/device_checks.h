#pragma once
// Checks the backend-seam tests share (with host_device.h's test device): an op raises
// NotImplementedError naming itself and the device, mixed devices raise PyTorch's RuntimeError,
// results computed on the device equal the CPU's, and a stub's CPU entry lent to the device.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ember/generated/ops.h"
#include "host_device.h"

namespace ember::test_util {

// The ErrorKind and message of the ember::Error f throws (a test failure if it throws none).
inline std::pair<ErrorKind, std::string> failure_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  ADD_FAILURE() << "expected an ember::Error";
  return {ErrorKind::Runtime, ""};
}

inline std::string message_of(const std::function<void()>& f) { return failure_of(f).second; }

// f raises NotImplementedError whose message names 'op' and the device.
inline void expect_no_kernel(const std::function<void()>& f, const std::string& op) {
  auto [kind, msg] = failure_of(f);
  EXPECT_EQ(kind, ErrorKind::NotImplemented) << op << ": " << msg;
  EXPECT_NE(msg.find("'" + op + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("privateuseone"), std::string::npos) << msg;
}

inline void expect_mixed_devices(const std::function<void()>& f, const std::string& what = "") {
  auto [kind, msg] = failure_of(f);
  EXPECT_EQ(kind, ErrorKind::Runtime) << what << ": " << msg;
  EXPECT_NE(msg.find("Expected all tensors to be on the same device"), std::string::npos) << what << ": " << msg;
}

inline bool same_values(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && ember::eq(a, b).all().item().to_bool();
}

// A result on the host device equals the CPU's: dtype, shape and every value.
inline void expect_same(const Tensor& on_device, const Tensor& on_cpu, int line = 0) {
  ASSERT_EQ(on_device.device(), host_device()) << "line " << line;
  Tensor back = on_device.to(Device());
  EXPECT_TRUE(back.device().is_cpu());
  EXPECT_EQ(back.dtype(), on_cpu.dtype()) << "line " << line;
  ASSERT_EQ(back.sizes(), on_cpu.sizes()) << "line " << line;
  EXPECT_TRUE(same_values(back, on_cpu)) << "line " << line;
}

inline Tensor longs(const std::vector<int64_t>& v) {
  Tensor t = ember::empty({int64_t(v.size())}, TensorOptions(kLong));
  for (size_t i = 0; i < v.size(); i++) t.select(0, int64_t(i)).fill_(v[i]);
  return t;
}

// Gives the host device the CPU's entry of `stub` for a scope (its memory is the host's).
template <class Fn>
struct BorrowCpuEntry {
  KernelStub<Fn>& stub;
  explicit BorrowCpuEntry(KernelStub<Fn>& s) : stub(s) {
    register_kernel(stub, DeviceType::PrivateUse1, stub.entries[int(DeviceType::CPU)]);
  }
  ~BorrowCpuEntry() { register_kernel(stub, DeviceType::PrivateUse1, Fn(nullptr)); }
  BorrowCpuEntry(const BorrowCpuEntry&) = delete;
  BorrowCpuEntry& operator=(const BorrowCpuEntry&) = delete;
};

}  // namespace ember::test_util
