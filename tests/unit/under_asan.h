// MANTISSA_UNDER_ASAN: 1 in AddressSanitizer builds, where a test may skip work that takes minutes
// there (GCC defines __SANITIZE_ADDRESS__; clang, which builds the sanitizer stage, answers
// __has_feature(address_sanitizer)).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define MANTISSA_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MANTISSA_UNDER_ASAN 1
#endif
#endif
#ifndef MANTISSA_UNDER_ASAN
#define MANTISSA_UNDER_ASAN 0
#endif
