#pragma once
// torch.distributed's error family: all RuntimeErrors in Python, told apart by class
// (DistStoreError for store timeouts, DistNetworkError for sockets, DistBackendError for collectives).
#include <string>

#include "ember/core/error.h"

namespace ember::distributed {

class EMBER_API DistError : public Error {
 public:
  explicit DistError(const std::string& msg) : Error(ErrorKind::Runtime, msg) {}
};
class EMBER_API DistStoreError : public DistError {
 public:
  using DistError::DistError;
};
class EMBER_API DistNetworkError : public DistError {
 public:
  using DistError::DistError;
};
class EMBER_API DistBackendError : public DistError {
 public:
  using DistError::DistError;
};

}  // namespace ember::distributed
