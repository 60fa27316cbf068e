#include "sim/core/units.hpp"

#include <gtest/gtest.h>

using namespace sgdsim::units;

TEST(Units, BandwidthBitsAndBytes) {
  EXPECT_DOUBLE_EQ(*parse_bandwidth_Bps("25Gbps"), 25e9 / 8);
  EXPECT_DOUBLE_EQ(*parse_bandwidth_Bps("12GBps"), 12e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth_Bps("100Mbps"), 100e6 / 8);
  EXPECT_DOUBLE_EQ(*parse_bandwidth_Bps("1.5KiBps"), 1536.0);
}

TEST(Units, Time) {
  EXPECT_DOUBLE_EQ(*parse_time_s("1.5us"), 1.5e-6);
  EXPECT_DOUBLE_EQ(*parse_time_s("252.9ms"), 0.2529);
  EXPECT_DOUBLE_EQ(*parse_time_s("3s"), 3.0);
  EXPECT_DOUBLE_EQ(*parse_time_s("2e-6s"), 2e-6);
  EXPECT_DOUBLE_EQ(*parse_time_s("10ns"), 10e-9);
}

TEST(Units, SizesSiAndBinary) {
  EXPECT_DOUBLE_EQ(*parse_size_bytes("100MB"), 100e6);
  EXPECT_DOUBLE_EQ(*parse_size_bytes("64KiB"), 65536.0);
  EXPECT_DOUBLE_EQ(*parse_size_bytes("8B"), 8.0);
  EXPECT_DOUBLE_EQ(*parse_size_bytes("1GiB"), 1073741824.0);
}

TEST(Units, Speed) {
  EXPECT_DOUBLE_EQ(*parse_speed_flops("15Tf"), 15e12);
  EXPECT_DOUBLE_EQ(*parse_speed_flops("211.2GFlops"), 211.2e9);
}

TEST(Units, RejectsMalformed) {
  for (const char* bad : {"", "Gbps", "25", "25Gbs", "25 Gbps", "fast", "25gbps", "1e999Gbps"})
    EXPECT_FALSE(parse_bandwidth_Bps(bad).has_value()) << bad;
  for (const char* bad : {"1.5", "1.5 us", "us", "1.5uss", "1.5US"})
    EXPECT_FALSE(parse_time_s(bad).has_value()) << bad;
  EXPECT_FALSE(parse_size_bytes("10mb").has_value());
  EXPECT_FALSE(parse_speed_flops("15TF").has_value());
}

TEST(Units, FormatRoundTrips) {
  for (double x : {1e-6, 2.5e-6, 1.25e10, 7e9}) {
    EXPECT_DOUBLE_EQ(*parse_time_s(format_time_s(x)), x);
    EXPECT_DOUBLE_EQ(*parse_bandwidth_Bps(format_bandwidth_Bps(x)), x);
    EXPECT_DOUBLE_EQ(*parse_speed_flops(format_speed_flops(x)), x);
  }
}
