// Shared-memory storages: moving in place, mapping again by fd or name, refcounted unlinking,
// and writes across fork().
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "ember/alloc/shared_memory.h"
#include "ember/generated/ops.h"

using namespace ember;

namespace {
bool segment_exists(const std::string& name) { return std::filesystem::exists("/dev/shm" + name); }
}  // namespace

TEST(SharedMemory, ShareInPlaceKeepsDataAndViews) {
  for (auto kind : {shm::Kind::kFd, shm::Kind::kFile}) {
    Tensor t = ember::arange(12).to(kFloat);
    Tensor v = t.narrow(0, 2, 3);
    shm::share(*t.impl()->storage(), kind);
    EXPECT_EQ(shm::kind_of(*v.impl()->storage()), kind);
    EXPECT_EQ(v.data_ptr(), static_cast<float*>(t.data_ptr()) + 2);
    EXPECT_EQ(static_cast<float*>(v.data_ptr())[1], 3.0f);
  }
  EXPECT_EQ(shm::kind_of(*ember::zeros({2}).impl()->storage()), shm::Kind::kNone);
}

TEST(SharedMemory, OpenByFdSeesTheSameMemory) {
  Tensor t = ember::zeros({4});
  auto& s = *t.impl()->storage();
  shm::share(s, shm::Kind::kFd);
  int64_t live = shm::live_mappings();
  {
    Storage other = shm::open_fd(shm::fd_of(s), s.nbytes());
    static_cast<float*>(other->data())[3] = 7.0f;
    EXPECT_EQ(shm::live_mappings(), live + 1);
  }
  EXPECT_EQ(static_cast<float*>(t.data_ptr())[3], 7.0f);
  EXPECT_EQ(shm::live_mappings(), live);
  EXPECT_THROW(shm::open_fd(shm::fd_of(s), s.nbytes() + 4096), std::exception);  // larger than the segment
}

TEST(SharedMemory, NamedSegmentUnlinkedByLastReference) {
  std::string name;
  {
    Tensor t = ember::ones({8});
    shm::share(*t.impl()->storage(), shm::Kind::kFile);
    name = shm::name_of(*t.impl()->storage());
    EXPECT_TRUE(segment_exists(name));
    shm::add_ref(*t.impl()->storage());  // a message in flight
    Storage received = shm::open_file(name, 32, /*adopt=*/true);
    EXPECT_EQ(static_cast<float*>(received->data())[7], 1.0f);
    t = Tensor();
    EXPECT_TRUE(segment_exists(name));  // the receiver still holds it
  }
  EXPECT_FALSE(segment_exists(name));
  EXPECT_THROW(shm::open_file(name, 32, false), std::exception);
}

TEST(SharedMemory, ForkedChildWritesAreSeen) {
  Tensor t = ember::zeros({2});
  shm::share(*t.impl()->storage(), shm::Kind::kFile);
  std::string name = shm::name_of(*t.impl()->storage());
  pid_t pid = fork();
  if (pid == 0) {
    static_cast<float*>(t.data_ptr())[1] = 5.0f;
    t = Tensor();  // the child's copy holds no reference: the segment must survive this
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(static_cast<float*>(t.data_ptr())[1], 5.0f);
  EXPECT_TRUE(segment_exists(name));
}
