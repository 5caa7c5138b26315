#pragma once
// Shared-memory storages (ember.multiprocessing, paper §5.4): a storage's bytes move into a
// mapping that another process can map too, so tensors cross processes without copies.
//  - kFd ('file_descriptor'): an anonymous memfd; the fd travels to the receiver (SCM_RIGHTS)
//    and the kernel frees the memory when the last fd and mapping are gone, even after SIGKILL.
//  - kFile ('file_system'): a named POSIX shm segment with a cross-process refcount in its first
//    cache line; whoever drops the last reference unlinks it. A tracker fd (Python's
//    resource_tracker) learns every name so segments of killed processes are unlinked at exit.
#include <cstddef>
#include <string>

#include "ember/core/macros.h"
#include "ember/core/storage.h"

namespace ember::shm {

enum class Kind { kNone, kFd, kFile };

// Which kind of shared mapping backs `s` (kNone for ordinary memory).
EMBER_API Kind kind_of(const StorageImpl& s);
// A new, zero-filled shared storage (a DataLoader worker collates its batch straight into one).
EMBER_API Storage allocate(size_t nbytes, Kind kind);
// Move the bytes of `s` into a new shared mapping, in place: every view of `s` follows.
EMBER_API void share(StorageImpl& s, Kind kind);
// The memfd of a kFd storage (still owned by the storage).
EMBER_API int fd_of(const StorageImpl& s);
// The segment name of a kFile storage.
EMBER_API std::string name_of(const StorageImpl& s);
// kFile: take one reference for a receiver that will adopt it in open_file(..., adopt=true),
// so the segment survives even if the sender drops its tensor before the receiver maps it.
EMBER_API void add_ref(const StorageImpl& s);
// Map a memfd received from another process (the fd is duplicated; the caller keeps its own).
EMBER_API Storage open_fd(int fd, size_t nbytes);
// Map a named segment; adopt=true takes over a reference made by add_ref, else adds one.
EMBER_API Storage open_file(const std::string& name, size_t nbytes, bool adopt);
// Drop a reference taken by add_ref that no receiver adopted (a message never delivered).
EMBER_API void release_file_ref(const std::string& name);
// Where REGISTER/UNREGISTER lines for named segments go (-1: nowhere).
EMBER_API void set_tracker_fd(int fd);
// Live shared mappings in this process (for tests).
EMBER_API int64_t live_mappings();

}  // namespace ember::shm
