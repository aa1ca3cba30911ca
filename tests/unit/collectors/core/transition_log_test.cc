#include "collectors/core/transition_log.h"

#include <cerrno>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

namespace fabricwatch {
namespace {

// A logger that records "<level> <message>" lines, one per record, at debug and above.
class TransitionLogTest : public ::testing::Test {
 protected:
  TransitionLogTest()
      : sink_(std::make_shared<spdlog::sinks::ostream_sink_st>(out_)),
        logger_(std::make_shared<spdlog::logger>("netdev", sink_)) {
    sink_->set_pattern("%l %v");
    logger_->set_level(spdlog::level::debug);
  }

  // The lines logged since the last call.
  std::vector<std::string> TakeLines() {
    std::vector<std::string> lines;
    std::istringstream in(out_.str());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    out_.str("");
    out_.clear();
    return lines;
  }

  static std::vector<std::string> AtLevel(const std::vector<std::string>& lines,
                                          const std::string& level) {
    std::vector<std::string> out;
    for (const std::string& line : lines) {
      if (line.starts_with(level + " ")) out.push_back(line);
    }
    return out;
  }

  std::ostringstream out_;
  std::shared_ptr<spdlog::sinks::ostream_sink_st> sink_;
  std::shared_ptr<spdlog::logger> logger_;
};

const Status kMtuError(StatusCode::kNotFound,
                       "open /sys/class/net/eth0/mtu: No such file or directory", 2);

TEST_F(TransitionLogTest, first_failure_logs_warn_once) {
  TransitionLog log(logger_);
  EXPECT_FALSE(log.IsFailing("eth0/mtu"));
  log.Failed("eth0/mtu", kMtuError);
  EXPECT_TRUE(log.IsFailing("eth0/mtu"));
  const auto lines = TakeLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "warning " + kMtuError.ToString());
}

TEST_F(TransitionLogTest, repeated_failure_logs_only_at_debug) {
  TransitionLog log(logger_);
  log.Failed("eth0/mtu", kMtuError);
  log.EndCollection();
  TakeLines();
  for (int round = 0; round < 3; ++round) {
    log.Failed("eth0/mtu", kMtuError);
    log.EndCollection();
  }
  const auto lines = TakeLines();
  EXPECT_TRUE(AtLevel(lines, "warning").empty());
  EXPECT_TRUE(AtLevel(lines, "info").empty());
  const auto debug = AtLevel(lines, "debug");
  ASSERT_EQ(debug.size(), 3u);
  EXPECT_EQ(debug[0], "debug still failing: " + kMtuError.ToString());
  EXPECT_TRUE(log.IsFailing("eth0/mtu"));
}

TEST_F(TransitionLogTest, repeated_failure_is_silent_at_info_level) {
  logger_->set_level(spdlog::level::info);
  TransitionLog log(logger_);
  log.Failed("eth0/mtu", kMtuError);
  log.EndCollection();
  log.Failed("eth0/mtu", kMtuError);
  log.EndCollection();
  const auto lines = TakeLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].starts_with("warning "));
}

TEST_F(TransitionLogTest, recovery_logs_info_once_after_end_collection) {
  TransitionLog log(logger_);
  log.Failed("eth0/mtu", kMtuError);
  log.EndCollection();
  TakeLines();

  // A round in which the key did not fail: nothing until EndCollection.
  EXPECT_TRUE(log.IsFailing("eth0/mtu"));
  EXPECT_TRUE(TakeLines().empty());
  log.EndCollection();
  EXPECT_FALSE(log.IsFailing("eth0/mtu"));
  auto lines = TakeLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "info eth0/mtu: recovered (was " + kMtuError.ToString() + ")");

  // Further clean rounds log nothing.
  log.EndCollection();
  log.EndCollection();
  EXPECT_TRUE(TakeLines().empty());
}

TEST_F(TransitionLogTest, recovery_message_carries_the_last_error) {
  TransitionLog log(logger_);
  log.Failed("eth0/speed", Status(StatusCode::kInvalidArgument, "first"));
  log.EndCollection();
  log.Failed("eth0/speed", Status(StatusCode::kInvalidArgument, "second"));
  log.EndCollection();
  TakeLines();
  log.EndCollection();
  const auto info = AtLevel(TakeLines(), "info");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0], "info eth0/speed: recovered (was invalid_argument: second)");
}

TEST_F(TransitionLogTest, failing_again_after_recovery_warns_again) {
  TransitionLog log(logger_);
  log.Failed("k", kMtuError);
  log.EndCollection();
  log.EndCollection();  // recovered
  TakeLines();
  log.Failed("k", kMtuError);
  const auto lines = TakeLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].starts_with("warning ")) << lines[0];
  EXPECT_TRUE(log.IsFailing("k"));
}

TEST_F(TransitionLogTest, keys_are_independent) {
  TransitionLog log(logger_);
  log.Failed("eth0/mtu", kMtuError);
  log.Failed("eth1/mtu", kMtuError);
  log.EndCollection();
  EXPECT_EQ(AtLevel(TakeLines(), "warning").size(), 2u);

  // Only eth1 keeps failing: eth0 recovers, eth1 logs at debug.
  log.Failed("eth1/mtu", kMtuError);
  log.EndCollection();
  const auto lines = TakeLines();
  const auto info = AtLevel(lines, "info");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_TRUE(info[0].starts_with("info eth0/mtu: recovered")) << info[0];
  EXPECT_EQ(AtLevel(lines, "debug").size(), 1u);
  EXPECT_TRUE(AtLevel(lines, "warning").empty());
  EXPECT_FALSE(log.IsFailing("eth0/mtu"));
  EXPECT_TRUE(log.IsFailing("eth1/mtu"));
}

TEST_F(TransitionLogTest, failing_twice_in_one_round_warns_once) {
  TransitionLog log(logger_);
  log.Failed("k", kMtuError);
  log.Failed("k", kMtuError);
  log.EndCollection();
  const auto lines = TakeLines();
  EXPECT_EQ(AtLevel(lines, "warning").size(), 1u);
  EXPECT_EQ(AtLevel(lines, "debug").size(), 1u);
  EXPECT_TRUE(AtLevel(lines, "info").empty());
  EXPECT_TRUE(log.IsFailing("k"));
}

TEST_F(TransitionLogTest, kept_keys_stay_failing_without_a_line_until_checked_good) {
  // A module EEPROM read every 30 s by a collector that runs every 5 s (issue 19): the runs that
  // do not read it keep its state.
  TransitionLog log(logger_);
  log.Failed("eth0/module-eeprom", kMtuError);
  log.Failed("eth0/decode", kMtuError);
  log.EndCollection();
  EXPECT_EQ(AtLevel(TakeLines(), "warning").size(), 2u);
  for (int run = 0; run < 5; ++run) {
    log.Keep("eth0");
    log.EndCollection();
  }
  EXPECT_TRUE(TakeLines().empty());
  EXPECT_TRUE(log.IsFailing("eth0/module-eeprom"));
  EXPECT_TRUE(log.IsFailing("eth0/decode"));

  // Only whole path components match: eth01 and eth0x are other things.
  log.Failed("eth01/module-eeprom", kMtuError);
  log.Keep("eth0");
  log.EndCollection();
  EXPECT_EQ(AtLevel(TakeLines(), "warning").size(), 1u);
  log.Keep("eth0");
  log.EndCollection();
  const auto info = AtLevel(TakeLines(), "info");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_TRUE(info[0].starts_with("info eth01/module-eeprom: recovered")) << info[0];

  // Read again and good: one recovery line each, then nothing.
  log.EndCollection();
  EXPECT_EQ(AtLevel(TakeLines(), "info").size(), 2u);
  log.Keep("eth0");
  log.EndCollection();
  EXPECT_TRUE(TakeLines().empty());
}

TEST_F(TransitionLogTest, file_limit_failures_are_one_state) {
  TransitionLog log(logger_);
  for (int round = 0; round < 3; ++round) {
    for (int file = 0; file < 50; ++file) {
      log.Failed(
          "eth" + std::to_string(file) + "/mtu",
          Status(StatusCode::kUnavailable,
                 "open /sys/class/net/eth" + std::to_string(file) + "/mtu: Too many open files",
                 EMFILE));
    }
    log.EndCollection();
  }
  auto lines = TakeLines();
  const auto warnings = AtLevel(lines, "warning");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("open-file limit"), std::string::npos) << warnings[0];
  EXPECT_TRUE(AtLevel(lines, "info").empty());
  EXPECT_TRUE(log.IsFailing(std::string(TransitionLog::kFileLimitKey)));
  log.EndCollection();
  const auto info = AtLevel(TakeLines(), "info");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_TRUE(info[0].starts_with("info open-file limit: recovered")) << info[0];
}

TEST_F(TransitionLogTest, many_new_failures_in_one_collection_are_summed_up) {
  logger_->set_level(spdlog::level::info);
  TransitionLog log(logger_);
  const size_t many = 3 * TransitionLog::kMaxLinesPerCollection;
  for (size_t i = 0; i < many; ++i) log.Failed("port" + std::to_string(i), kMtuError);
  log.EndCollection();
  auto lines = TakeLines();
  // kMaxLinesPerCollection one by one, and one line for the rest.
  ASSERT_EQ(AtLevel(lines, "warning").size(), TransitionLog::kMaxLinesPerCollection + 1);
  EXPECT_NE(lines.back().find(std::to_string(many - TransitionLog::kMaxLinesPerCollection) +
                              " more failures"),
            std::string::npos)
      << lines.back();
  for (size_t i = 0; i < many; ++i) EXPECT_TRUE(log.IsFailing("port" + std::to_string(i)));

  // Still failing: silent.
  for (size_t i = 0; i < many; ++i) log.Failed("port" + std::to_string(i), kMtuError);
  log.EndCollection();
  EXPECT_TRUE(TakeLines().empty());

  // All recover: a recovery line for each announced start (at most the per-collection number),
  // none for the ones never announced.
  log.EndCollection();
  lines = TakeLines();
  EXPECT_EQ(AtLevel(lines, "info").size(), TransitionLog::kMaxLinesPerCollection);
  EXPECT_TRUE(AtLevel(lines, "warning").empty());
}

}  // namespace
}  // namespace fabricwatch
