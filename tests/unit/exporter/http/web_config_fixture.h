#pragma once
// The fixture of the WebSecurity tests (web_security_test.cc, web_security_reload_test.cc): a
// test PKI in a temporary directory, a web.yml written beside it and renamed over (a new inode,
// as an operator's tooling would), and a logger whose lines the test can count.

#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include "exporter/http/web_security.h"
#include "tests/unit/exporter/http/tls_test_pki.h"

namespace fabricwatch::testing {

class WebConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(pki_.Make(error)) << error;
    logger_ = std::make_shared<spdlog::logger>(
        "web", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_));
  }
  std::string Path() const { return pki_.Path("web.yml"); }
  void WriteConfig(const std::string& text) const {
    pki_.Write("web.yml.new", text);
    std::filesystem::rename(pki_.Path("web.yml.new"), Path());
  }
  // WebSecurity::Load of web.yml as it is; a failure fails the test (and gives Plain()).
  std::shared_ptr<exporter::WebSecurity> LoadWritten(bool healthz_exempt = false) {
    auto web = exporter::WebSecurity::Load(Path(), healthz_exempt, logger_);
    EXPECT_TRUE(web.has_value()) << web.error().message();
    return web ? *web : exporter::WebSecurity::Plain();
  }
  // How many times `needle` is in the log.
  size_t Count(const std::string& needle) const {
    const std::string text = log_.str();
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++n;
    }
    return n;
  }

  TestPki pki_;
  std::ostringstream log_;
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace fabricwatch::testing
