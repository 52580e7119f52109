#include "computegraph/dump.hpp"

#include <cstdlib>
#include <string>

namespace computegraph {

namespace {
std::string read_env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}
}  // namespace

bool dump_enabled(std::string_view stage) {
  static const std::string stages = "," + read_env("COMPUTEGRAPH_DUMP") + ",";
  if (stages == ",,") return false;
  if (stages.find(",all,") != std::string::npos) return true;
  return stages.find("," + std::string(stage) + ",") != std::string::npos;
}

bool verify_requested() {
  static const bool requested = [] {
    std::string value = read_env("COMPUTEGRAPH_VERIFY");
    return !value.empty() && value != "0";
  }();
  return requested;
}

}  // namespace computegraph
