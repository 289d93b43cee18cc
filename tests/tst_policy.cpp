// Tests of the dtype policy table (Keras names) and of dtype name parsing.
// Unknown names must fail with a message that lists every valid name, since users read it.

#include "core/error.h"
#include "core/numeric/dtype.h"
#include "core/numeric/policy.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

class TestPolicy {

public:
    void policyDtypes_data();
    void policyDtypes();
    void tableIsComplete();
    void unknownPolicyListsValidNames_data();
    void unknownPolicyListsValidNames();
    void dtypeAliases_data();
    void dtypeAliases();
    void unknownDtype_data();
    void unknownDtype();
    void dtypeProperties();
};

void TestPolicy::policyDtypes_data() {
    add_column<std::string>("name");
    add_column<DType>("compute");
    add_column<DType>("variable");
    add_column<bool>("mixed");
    add_column<bool>("lossScaling");
    new_row("float32") << "float32" << DType::Float32 << DType::Float32 << false << false;
    new_row("float64") << "float64" << DType::Float64 << DType::Float64 << false << false;
    new_row("float16") << "float16" << DType::Float16 << DType::Float16 << false << true;
    new_row("bfloat16") << "bfloat16" << DType::BFloat16 << DType::BFloat16 << false << false;
    new_row("mixed_float16") << "mixed_float16" << DType::Float16 << DType::Float32 << true << true;
    new_row("mixed_bfloat16") << "mixed_bfloat16" << DType::BFloat16 << DType::Float32 << true
                              << false;
}

void TestPolicy::policyDtypes() {
    FETCH(std::string, name);
    FETCH(DType, compute);
    FETCH(DType, variable);
    FETCH(bool, mixed);
    FETCH(bool, lossScaling);
    const Policy p = policy_from_name(name);
    CHECK_EQ(p.name, name);
    CHECK_EQ(p.compute, compute);
    CHECK_EQ(p.variable, variable);
    CHECK_EQ(p.is_mixed(), mixed);
    CHECK_EQ(loss_scaling_recommended(p), lossScaling);
    CHECK(!policy_description(p).empty());
}

void TestPolicy::tableIsComplete() {
    CHECK_EQ(all_policies().size(), std::size_t(13)); // 6 Keras policies + 7 quantised (issue 18)
    for (const Policy& p : all_policies()) CHECK_EQ(policy_from_name(p.name), p);
}

void TestPolicy::unknownPolicyListsValidNames_data() {
    add_column<std::string>("name");
    new_row("typo") << "mixed_float61";
    new_row("empty") << "";
    new_row("case") << "Float32";
    new_row("dtype alias is not a policy") << "fp16";
}

void TestPolicy::unknownPolicyListsValidNames() {
    FETCH(std::string, name);
    try {
        policy_from_name(name);
        FAIL_TEST("accepted an unknown policy");
    } catch (const Error& e) {
        CHECK_EQ(e.kind(), ErrorKind::Config);
        const std::string message = e.what();
        CHECK_MSG(contains(message, "'" + name + "'"), (message));
        for (const Policy& p : all_policies()) CHECK_MSG(contains(message, p.name), (message));
    }
}

void TestPolicy::dtypeAliases_data() {
    add_column<std::string>("name");
    add_column<DType>("dtype");
    const auto row = [](const char* name, DType d) { new_row(name) << std::string(name) << d; };
    row("float64", DType::Float64);
    row("double", DType::Float64);
    row("fp64", DType::Float64);
    row("float32", DType::Float32);
    row("f32", DType::Float32);
    row("float16", DType::Float16);
    row("fp16", DType::Float16);
    row("half", DType::Float16);
    row("bfloat16", DType::BFloat16);
    row("bf16", DType::BFloat16);
    row("float8_e4m3", DType::Float8E4M3);
    row("e4m3", DType::Float8E4M3);
    row("float8_e4m3fn", DType::Float8E4M3);
    row("float8_e5m2", DType::Float8E5M2);
    row("e5m2", DType::Float8E5M2);
    row("uint8", DType::UInt8);
    row("int32", DType::Int32);
}

void TestPolicy::dtypeAliases() {
    FETCH(std::string, name);
    FETCH(DType, dtype);
    CHECK_EQ(dtype_from_name(name), dtype);
    // Canonical names round-trip.
    CHECK_EQ(dtype_from_name(dtype_name(dtype)), dtype);
}

void TestPolicy::unknownDtype_data() {
    add_column<std::string>("name");
    new_row("typo") << "float61";
    new_row("empty") << "";
    new_row("upper case") << "FP16";
    new_row("tf32") << "tf32";
}

void TestPolicy::unknownDtype() {
    FETCH(std::string, name);
    try {
        dtype_from_name(name);
        FAIL_TEST("accepted an unknown dtype");
    } catch (const Error& e) {
        CHECK_EQ(e.kind(), ErrorKind::Config);
        const std::string message = e.what();
        CHECK_MSG(contains(message, "'" + name + "'"), (message));
        for (DType d : floating_dtypes())
            CHECK_MSG(contains(message, std::string(dtype_name(d))), (message));
    }
}

void TestPolicy::dtypeProperties() {
    CHECK_EQ(dtype_size(DType::Float64), std::size_t(8));
    CHECK_EQ(dtype_size(DType::BFloat16), std::size_t(2));
    CHECK_EQ(dtype_size(DType::Float8E5M2), std::size_t(1));
    CHECK(is_emulated_float(DType::Float16));
    CHECK(!is_emulated_float(DType::Float32));
    CHECK(!is_floating(DType::Int32));
    CHECK_EQ(floating_dtypes().size(), std::size_t(6));
    CHECK_EQ(floating_dtypes().front(), DType::Float64);
}

MANTISSA_TEST_MAIN(TestPolicy, policyDtypes, tableIsComplete, unknownPolicyListsValidNames,
                   dtypeAliases, unknownDtype, dtypeProperties)
