#pragma once
// The DLPack ABI (v0.8 "legacy" DLManagedTensor), as specified by dmlc/dlpack: the data
// structures exchanged through "dltensor" capsules (tensor_new.cpp adds the 1.x versioned form).
#include <Python.h>

#include <cstdint>

#include "ember/core/tensor.h"

extern "C" {
typedef enum { kDLCPU = 1, kDLCUDA = 2 } DLDeviceType;
typedef struct { DLDeviceType device_type; int32_t device_id; } DLDevice;
typedef enum { kDLInt = 0U, kDLUInt = 1U, kDLFloat = 2U, kDLOpaqueHandle = 3U, kDLBfloat = 4U, kDLComplex = 5U, kDLBool = 6U } DLDataTypeCode;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;
}

namespace ember::py {
// versioned: a DLPack 1.x "dltensor_versioned" capsule (copied sets its IS_COPIED flag)
PyObject* tensor_to_dlpack(const Tensor& t, bool versioned = false, bool copied = false);
Tensor tensor_from_dlpack(PyObject* obj);
Tensor tensor_from_numpy(PyObject* arr, bool allow_readonly);
}  // namespace ember::py
