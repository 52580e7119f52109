// tenferro_fuzz: generates and checks random programs (program_check.hpp) for a range of seeds,
// shrinks each failure and prints it as C++.
//
//   tenferro_fuzz [--first SEED] [--count N] [--no-shrink] [--progress N]
//
// Prints one line per failure ("FAIL seed=... check=...", the message and the shrunk program),
// a progress line every N programs, and a summary line
// "fuzz first=... count=... failures=... seconds=... skipped: ...". Exits 1 if any program failed.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>

#include "tenferro/testing/program_check.hpp"
#include "tenferro/testing/shrink.hpp"

namespace tt = tenferro::testing;

int main(int argc, char** argv) {
  std::uint64_t first = 0, count = 1000, progress = 0;
  bool shrinking = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::uint64_t {
      if (i + 1 >= argc) {
        std::cerr << "tenferro_fuzz: " << arg << " needs a value\n";
        std::exit(2);
      }
      return std::strtoull(argv[++i], nullptr, 10);
    };
    if (arg == "--first") first = next();
    else if (arg == "--count") count = next();
    else if (arg == "--progress") progress = next();
    else if (arg == "--no-shrink") shrinking = false;
    else {
      std::cerr << "usage: tenferro_fuzz [--first SEED] [--count N] [--no-shrink] [--progress N]\n";
      return 2;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  std::uint64_t failures = 0, checks = 0;
  std::map<std::string, int> skipped;
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    const tt::RandomProgram program = tt::generate_program(seed);
    const tt::ProgramReport report = tt::check_program(program);
    checks += static_cast<std::uint64_t>(report.checks_run);
    for (const auto& [why, n] : report.skipped) skipped[why] += n;
    if (!report.ok) {
      ++failures;
      std::cout << "FAIL seed=" << seed << " check=" << report.check << "\n" << report.message << "\n";
      tt::RandomProgram small = program;
      if (shrinking) {
        small = tt::shrink(program, [&](const tt::RandomProgram& p) { return tt::check_program(p).check == report.check; });
        std::cout << "shrunk: " << tt::check_program(small).message << "\n";
      }
      std::cout << tt::to_cpp(small) << std::endl;
    }
    if (progress && (seed - first + 1) % progress == 0) {
      std::cout << "progress programs=" << seed - first + 1 << " failures=" << failures << " seconds=" << seconds()
                << std::endl;
    }
  }
  std::cout << "fuzz first=" << first << " count=" << count << " failures=" << failures << " checks=" << checks
            << " seconds=" << seconds() << " skipped:";
  for (const auto& [why, n] : skipped) std::cout << " " << why << "=" << n;
  std::cout << std::endl;
  return failures ? 1 : 0;
}
