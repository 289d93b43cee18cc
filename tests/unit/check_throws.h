// CHECK_THROWS(Type, expression): the Qt-free QVERIFY_THROWS_EXCEPTION. Passes when `expression`
// throws a Type; fails (ending the test function) when it throws nothing or something else.
#pragma once

#include <exception>
#include <string>

#include "tests/unit/unit_test.h"

#define CHECK_THROWS(Type, ...)                                                                    \
    do {                                                                                           \
        std::string mantissa_unit_thrown = "no exception caught";                                  \
        try {                                                                                      \
            __VA_ARGS__;                                                                           \
        } catch (const Type&) {                                                                    \
            mantissa_unit_thrown.clear();                                                          \
        } catch (const std::exception& mantissa_unit_e) {                                          \
            mantissa_unit_thrown =                                                                 \
                std::string("std::exception caught: ") + mantissa_unit_e.what();                   \
        } catch (...) {                                                                            \
            mantissa_unit_thrown = "unknown exception caught";                                     \
        }                                                                                          \
        if (!mantissa_unit_thrown.empty()) {                                                       \
            ::mantissa::unit::record_failure(                                                      \
                __FILE__, __LINE__,                                                                \
                "Expected exception of type " #Type " to be thrown but " + mantissa_unit_thrown);  \
            return;                                                                                \
        }                                                                                          \
    } while (false)
