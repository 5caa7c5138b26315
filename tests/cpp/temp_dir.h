#pragma once
// A fresh folder per test (named after the test and the process), removed when the test ends.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace ember::test_util {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const char* prefix) {
    path = std::filesystem::temp_directory_path() /
           (std::string(prefix) + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const char* name) const { return (path / name).string(); }
};

}  // namespace ember::test_util
