#pragma once
// A bcrypt hash for the tests of basic auth and the web configuration: libxcrypt's
// crypt_gensalt_rn with a fresh random salt, then crypt_rn. Cost 4, the minimum, is fast.

#include <crypt.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace fabricwatch::testing {

inline std::string BcryptHash(const std::string& password, const char* prefix = "$2b$",
                              int cost = 4) {
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(crypt_gensalt_rn(prefix, cost, nullptr, 0, setting, sizeof(setting)), nullptr);
  auto data = std::make_unique<crypt_data>();
  const char* hash = crypt_rn(password.c_str(), setting, data.get(), sizeof(*data));
  EXPECT_NE(hash, nullptr);
  return hash != nullptr ? std::string(hash) : std::string();
}

}  // namespace fabricwatch::testing
