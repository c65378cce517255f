// with_exit_status: a command's body, its exceptions turned into docs/contract.md §3's exit status with one line
// on stderr: attnforge::input_error (bad usage or input) → 2, any other exception → 1. A body that takes a
// stream writes its warnings there (a float64 input converted): they reach stderr only if the command
// succeeds, so that a failure is the one line the contract promises.
#pragma once

#include <attnforge/errors.hpp>

#include <exception>
#include <ostream>
#include <sstream>
#include <type_traits>
#include <string_view>

namespace attnforge::cli {

template <class Body>
int with_exit_status(std::string_view command, std::ostream& err, Body&& body) {
    std::ostringstream warnings;
    try {
        int status = 0;
        if constexpr (std::is_invocable_v<Body, std::ostream&>)
            status = body(warnings);
        else
            status = body();
        err << warnings.str();
        return status;
    } catch (const input_error& e) {
        err << "attnforge " << command << ": " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        err << "attnforge " << command << ": error: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace attnforge::cli
