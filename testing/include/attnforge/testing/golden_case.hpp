// Loads one golden case written by tests/golden/make_golden.py: its manifest case.txt maps input
// names to .npy files and names the expected output and attention weights.
#pragma once

#include <attnforge/interp/binding.hpp>
#include <attnforge/io/npy.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnforge::testing {

struct GoldenCase {
    std::string name;
    interp::TensorMap inputs;
    interp::Tensor expected_output;
    std::optional<interp::Tensor> expected_attention_weights;
};

inline GoldenCase load_golden_case(const std::filesystem::path& dir) {
    GoldenCase c;
    c.name = dir.filename().string();
    std::ifstream manifest(dir / "case.txt");
    if (!manifest) throw std::runtime_error("cannot read " + (dir / "case.txt").string());
    std::string line;
    bool has_output = false;
    while (std::getline(manifest, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        std::string role, name, file;
        fields >> role >> name;
        if (role == "input") {
            fields >> file;
            c.inputs.emplace(name, io::to_tensor(io::read_npy((dir / file).string())));
        } else if (role == "output") {
            c.expected_output = io::to_tensor(io::read_npy((dir / name).string()));
            has_output = true;
        } else if (role == "attention_weights") {
            c.expected_attention_weights = io::to_tensor(io::read_npy((dir / name).string()));
        } else {
            throw std::runtime_error((dir / "case.txt").string() + ": unknown role '" + role + "'");
        }
    }
    if (!has_output) throw std::runtime_error((dir / "case.txt").string() + ": no expected output");
    return c;
}

// Every case folder of one variant, sorted by name.
inline std::vector<std::filesystem::path> golden_case_dirs(const std::filesystem::path& root,
                                                           std::string_view variant) {
    std::vector<std::filesystem::path> dirs;
    const auto vdir = root / variant;
    if (std::filesystem::is_directory(vdir))
        for (const auto& e : std::filesystem::directory_iterator(vdir))
            if (std::filesystem::exists(e.path() / "case.txt")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    return dirs;
}

}  // namespace attnforge::testing
