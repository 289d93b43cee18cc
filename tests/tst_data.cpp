// Tests for the data layer: the real MNIST files, every kind of corrupt IDX file, data-folder
// lookup, and the atomic file writer. Bad files are generated so each check is hit on purpose.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/data/idx.h"
#include "core/data/mnist.h"
#include "core/error.h"
#include "core/io/atomic_file.h"
#include "tests/unit/error_of.h"
#include "tests/unit/files.h"
#include "tests/unit/temp_dir.h"
#include "tests/unit/unit_test.h"

using mantissa::Error;
using mantissa::ErrorKind;
using namespace mantissa::unit;

namespace {

std::string be32(std::uint32_t v) {
    std::string b(4, '\0');
    b[0] = char(v >> 24);
    b[1] = char(v >> 16);
    b[2] = char(v >> 8);
    b[3] = char(v);
    return b;
}

// An IDX file: magic (two zero bytes, type, rank), big-endian dimensions, `payload` data bytes.
std::string idx(unsigned type, unsigned rank, const std::vector<std::uint32_t>& dims,
                std::int64_t payload, char fill = 0) {
    std::string b;
    b += '\0';
    b += '\0';
    b += char(type);
    b += char(rank);
    for (std::uint32_t d : dims) b += be32(d);
    b += std::string(static_cast<std::size_t>(payload), fill);
    return b;
}

void writeBytes(const std::string& path, const std::string& bytes) {
    CHECK_MSG(write_file(path, bytes), path);
}

// A small but well-formed MNIST split: n images of 28x28 and n labels.
void writeSplit(const std::string& dir, const char* images, const char* labels, std::uint32_t n,
                std::uint32_t labelCount, char label = 3) {
    writeBytes(dir + "/" + images, idx(0x08, 3, {n, 28, 28}, std::int64_t(n) * 784, char(7)));
    writeBytes(dir + "/" + labels, idx(0x08, 1, {labelCount}, labelCount, label));
}

namespace fs = std::filesystem;

// QFile::setPermissions: exactly these bits; false when they cannot be set.
bool set_mode(const std::string& path, fs::perms mode) {
    std::error_code error;
    fs::permissions(path, mode, fs::perm_options::replace, error);
    return !error;
}

std::vector<std::string> entries(const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace

class TestData {

public:
    void realMnistLoads();
    void findDataDirOrder();
    void badIdx_data();
    void badIdx();
    void badMnist_data();
    void badMnist();
    void missingFolder();
    void badDataFolder_data();
    void badDataFolder();
    void atomicWriteCreatesAndOverwrites();
    void atomicWriteUnwritableFolder();
    void atomicWriteFailureLeavesNoTemp();
    void readFileErrors();
};

void TestData::realMnistLoads() {
    const std::string dir = mantissa::find_data_dir("");
    if (!exists(dir + "/train-images-idx3-ubyte"))
        SKIP_TEST(("MNIST not found in " + (dir) + "; run ./mantissa.sh to fetch it"));
    const mantissa::Mnist m = mantissa::load_mnist(dir);
    CHECK_EQ(m.train.count, std::int64_t{60000});
    CHECK_EQ(m.test.count, std::int64_t{10000});
    CHECK_EQ(m.train.rows, std::int64_t{28});
    CHECK_EQ(m.train.cols, std::int64_t{28});
    CHECK_EQ(m.train.images.size(), std::size_t{60000} * 784);
    CHECK_EQ(m.test.images.size(), std::size_t{10000} * 784);
    CHECK_EQ(m.train.labels.size(), std::size_t{60000});
    CHECK_EQ(m.test.labels.size(), std::size_t{10000});
    int perDigit[10] = {};
    for (std::uint8_t l : m.train.labels) {
        CHECK(l <= 9);
        ++perDigit[l];
    }
    for (std::uint8_t l : m.test.labels) CHECK(l <= 9);
    // The training set's well-known class sizes: 5923 zeros ... 5949 nines.
    CHECK_EQ(perDigit[0], 5923);
    CHECK_EQ(perDigit[1], 6742);
    CHECK_EQ(perDigit[9], 5949);
    // The first training digit is the famous "5", the first test digit a 7.
    CHECK_EQ(int(m.train.labels[0]), 5);
    CHECK_EQ(int(m.train.labels[1]), 0);
    CHECK_EQ(int(m.test.labels[0]), 7);
    // Row 5, columns 12..23 of that "5": the top stroke as every MNIST tutorial prints it.
    const int row5[12] = {3, 18, 18, 18, 126, 136, 175, 26, 166, 255, 247, 127};
    for (int c = 0; c < 12; ++c) CHECK_EQ(int(m.train.images[5 * 28 + 12 + c]), row5[c]);
    CHECK_EQ(int(m.train.images[0]), 0);
}

void TestData::findDataDirOrder() {
    const char* env = std::getenv("MANTISSA_DATA");
    const bool hadEnv = env != nullptr;
    const std::string saved = hadEnv ? env : "";
    setenv("MANTISSA_DATA", "/from/env", 1);
    CHECK_EQ(mantissa::find_data_dir("/from/cli"), std::string("/from/cli"));
    CHECK_EQ(mantissa::find_data_dir(""), std::string("/from/env"));
    unsetenv("MANTISSA_DATA");
    const std::string fallback = mantissa::find_data_dir("");
    if (std::filesystem::is_directory(MANTISSA_SOURCE_DIR "/data/mnist"))
        CHECK_EQ(fallback, std::string(MANTISSA_SOURCE_DIR "/data/mnist"));
    else
        CHECK_EQ(fallback, std::string("data/mnist"));
    if (hadEnv) setenv("MANTISSA_DATA", saved.c_str(), 1);
}

void TestData::badIdx_data() {
    add_column<std::string>("bytes");
    add_column<int>("rank");
    add_column<std::string>("expected");

    new_row("empty file") << std::string() << 3 << "truncated";
    new_row("header cut short") << idx(0x08, 3, {2, 28}, 0) << 3 << "truncated header";
    new_row("truncated data") << idx(0x08, 3, {2, 28, 28}, 2 * 784 - 1) << 3
                              << "truncated: expected 1584 bytes";
    new_row("trailing bytes") << idx(0x08, 3, {2, 28, 28}, 2 * 784 + 1) << 3
                              << "trailing bytes: expected 1584 bytes";
    std::string badMagic = idx(0x08, 3, {2, 28, 28}, 2 * 784);
    badMagic[0] = char(0x1F);
    badMagic[1] = char(0x8B); // what a still-gzipped file starts with
    new_row("wrong magic") << badMagic << 3 << "magic number is 0x1F8B0803, expected 0x00000803";
    new_row("wrong type code") << idx(0x0D, 3, {2, 28, 28}, 2 * 784 * 4) << 3
                               << "type code is 0x0D (float32), expected 0x08";
    new_row("wrong rank") << idx(0x08, 2, {2, 784}, 2 * 784) << 3 << "has 2 dimensions, expected 3";
    new_row("labels given as images")
        << idx(0x08, 1, {2}, 2) << 3 << "has 1 dimensions, expected 3";
    new_row("zero dimension") << idx(0x08, 3, {0, 28, 28}, 0) << 3
                              << "dimension 0 is 0, expected a positive size";
    new_row("huge dimension") << idx(0x08, 3, {0xFFFFFFFFu, 28, 28}, 0) << 3
                              << "dimension 0 is 4294967295, expected less than 16777216";
    new_row("product too large") << idx(0x08, 3, {16000000, 16000000, 28}, 0) << 3
                                 << "multiply to more than";
    // Regression (fuzz/fuzz_idx): the first two stay just under 2^40 elements, the third
    // overflowed int64 in the product (UB) before the limit was checked.
    new_row("product overflows int64")
        << idx(0x08, 3, {172545, 6307840, 13275136}, 0) << 3 << "multiply to more than";
}

void TestData::badIdx() {
    FETCH(std::string, bytes);
    FETCH(int, rank);
    FETCH(std::string, expected);
    TempDir tmp;
    CHECK(!tmp.path().empty());
    const std::string path = tmp.file("bad-idx3-ubyte");
    writeBytes(path, bytes);
    const std::string msg = error_of([&] { mantissa::read_idx_u8(path, rank); }, ErrorKind::Data);
    CHECK_MSG(msg.starts_with(path + ": "), (msg));
    CHECK_MSG(contains(msg, expected), (msg));
}

void TestData::badMnist_data() {
    add_column<std::string>("breakage");
    add_column<std::string>("file");
    add_column<std::string>("expected");

    new_row("label 11") << "label11"
                        << "train-labels-idx1-ubyte"
                        << "label 2 is 11, expected a digit 0..9";
    new_row("count mismatch") << "mismatch"
                              << "train-labels-idx1-ubyte"
                              << "holds 4 labels, but";
    new_row("not 28x28") << "27x28"
                         << "train-images-idx3-ubyte"
                         << "images are 27x28 pixels, expected 28x28";
    new_row("not 60000 images") << "none"
                                << "train-images-idx3-ubyte"
                                << "holds 5 images, expected 60000";
    new_row("missing file") << "missing"
                            << "t10k-labels-idx1-ubyte"
                            << "file not found. Run ./mantissa.sh";
    new_row("truncated test images") << "truncated"
                                     << "t10k-images-idx3-ubyte"
                                     << "truncated";
}

// Builds a small, consistent data folder and then breaks one thing in it.
void TestData::badMnist() {
    FETCH(std::string, breakage);
    FETCH(std::string, file);
    FETCH(std::string, expected);
    TempDir tmp;
    CHECK(!tmp.path().empty());
    const std::string dir = tmp.path();
    writeSplit(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 5, 5);
    writeSplit(dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", 5, 5);

    if (breakage == "label11") {
        std::string labels = idx(0x08, 1, {5}, 5, 1);
        labels[8 + 2] = char(11);
        writeBytes(dir + "/train-labels-idx1-ubyte", labels);
    } else if (breakage == "mismatch") {
        writeSplit(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 5, 4);
    } else if (breakage == "27x28") {
        writeBytes(dir + "/train-images-idx3-ubyte", idx(0x08, 3, {5, 27, 28}, 5 * 27 * 28));
    } else if (breakage == "missing") {
        // The training split must load first, so make it the real size (47 MB, in a temp dir).
        writeSplit(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 60000, 60000);
        CHECK(fs::remove(dir + "/t10k-labels-idx1-ubyte"));
    } else if (breakage == "truncated") {
        writeSplit(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 60000, 60000);
        writeBytes(dir + "/t10k-images-idx3-ubyte", idx(0x08, 3, {10000, 28, 28}, 10000 * 784 - 5));
    }
    const std::string msg = error_of([&] { mantissa::load_mnist(dir); }, ErrorKind::Data);
    CHECK_MSG(msg.starts_with(dir + "/" + file + ": "), (msg));
    CHECK_MSG(contains(msg, expected), (msg));
}

void TestData::missingFolder() {
    TempDir tmp;
    const std::string dir = tmp.file("no-such-folder");
    const std::string msg = error_of([&] { mantissa::load_mnist(dir); }, ErrorKind::Data);
    CHECK_MSG(contains(msg, "'" + dir + "' does not exist"), (msg));
    CHECK_MSG(contains(msg, "./mantissa.sh"), (msg));
    CHECK_MSG(contains(msg, "--data DIR"), (msg));
    CHECK_MSG(contains(msg, "MANTISSA_DATA"), (msg));
}

// Data folders a user can point --data or MANTISSA_DATA at by mistake: each gives Error(Data)
// naming the path and what is wrong, never a std::filesystem exception (which the CLI would
// report as an "unexpected error" and the GUI as a bare system message).
void TestData::badDataFolder_data() {
    add_column<std::string>("layout");
    add_column<std::string>("named"); // relative to the temp dir
    add_column<std::string>("expected");
    new_row("empty folder") << "empty"
                            << "/train-images-idx3-ubyte"
                            << "file not found. Run ./mantissa.sh";
    new_row("a file, not a folder") << "file"
                                    << "/mnist"
                                    << "is not a folder";
    new_row("an IDX name that is a folder") << "dir-as-file"
                                            << "/train-images-idx3-ubyte"
                                            << "not a regular file";
    new_row("symlink loop") << "loop"
                            << "/train-images-idx3-ubyte"
                            << "symbolic links";
}

void TestData::badDataFolder() {
    FETCH(std::string, layout);
    FETCH(std::string, named);
    FETCH(std::string, expected);
    TempDir tmp;
    CHECK(!tmp.path().empty());
    std::string dir = tmp.path();
    if (layout == "file") {
        dir = tmp.file("mnist");
        writeBytes(dir, "not a folder");
        named = std::string();
    } else if (layout == "dir-as-file") {
        CHECK(fs::create_directory(dir + "/train-images-idx3-ubyte"));
        writeBytes(dir + "/train-labels-idx1-ubyte", idx(0x08, 1, {5}, 5, 1));
    } else if (layout == "loop") {
        // train-images -> a -> train-images: stat() fails with ELOOP, not ENOENT.
        CHECK(symlink((dir + "/a").c_str(), (dir + "/train-images-idx3-ubyte").c_str()) == 0);
        CHECK(symlink((dir + "/train-images-idx3-ubyte").c_str(), (dir + "/a").c_str()) == 0);
        writeBytes(dir + "/train-labels-idx1-ubyte", idx(0x08, 1, {5}, 5, 1));
    }
    const std::string msg = error_of([&] { mantissa::load_mnist(dir); }, ErrorKind::Data);
    CHECK_MSG(contains(msg, named.empty() ? dir : tmp.path() + named), (msg));
    CHECK_MSG(contains(msg, expected), (msg));
}

void TestData::atomicWriteCreatesAndOverwrites() {
    TempDir tmp;
    const std::string path = tmp.file("exp.json");
    mantissa::write_file_atomic(path, "first");
    CHECK_EQ(mantissa::read_file(path), std::string("first"));
    mantissa::write_file_atomic(path, std::string("second\0with nul", 15));
    CHECK_EQ(mantissa::read_file(path), std::string("second\0with nul", 15));
    mantissa::write_file_atomic(path, "");
    CHECK_EQ(mantissa::read_file(path), std::string());
    const std::string big(3 << 20, 'x'); // several write() calls' worth
    mantissa::write_file_atomic(path, big);
    CHECK_EQ(mantissa::read_file(path), big);
    CHECK_EQ(entries(tmp.path()), std::vector<std::string>{"exp.json"}); // no temp file left behind
}

void TestData::atomicWriteUnwritableFolder() {
    // /proc refuses new files even to root, so this case runs under CI (which is root) too.
    if (exists("/proc/version")) {
        const std::string before = mantissa::read_file("/proc/version");
        const std::string msg =
            error_of([] { mantissa::write_file_atomic("/proc/version", "x"); }, ErrorKind::Io);
        CHECK_MSG(contains(msg, "'/proc/version'"), (msg));
        CHECK_EQ(mantissa::read_file("/proc/version"), before);
    }
    // A read-only folder: the ordinary case for a user; root ignores permissions, so skip there.
    TempDir tmp;
    const std::string dir = tmp.file("ro");
    CHECK(std::filesystem::create_directory(dir));
    const std::string path = (dir + "/exp.json");
    mantissa::write_file_atomic(path, "old");
    CHECK(set_mode(dir, fs::perms::owner_read | fs::perms::owner_exec));
    if (::geteuid() == 0) {
        set_mode(dir, fs::perms::owner_all);
        SKIP_TEST("running as root: a read-only folder is still writable (the /proc case ran)");
    }
    const std::string msg =
        error_of([&] { mantissa::write_file_atomic(path, "new"); }, ErrorKind::Io);
    set_mode(dir, fs::perms::owner_all);
    CHECK_MSG(contains(msg, (path)), (msg));
    CHECK_MSG(contains(msg, "Permission denied"), (msg));
    CHECK_EQ(mantissa::read_file(path), std::string("old"));
    CHECK_EQ(entries(dir), std::vector<std::string>{"exp.json"});
}

void TestData::atomicWriteFailureLeavesNoTemp() {
    // The rename fails (the target is a non-empty folder) after the temp file was written:
    // the temp file must be gone and the folder untouched.
    TempDir tmp;
    const std::string target = tmp.file("taken");
    CHECK(std::filesystem::create_directory(target));
    writeBytes(target + "/inside", "keep");
    const std::string msg =
        error_of([&] { mantissa::write_file_atomic(target, "data"); }, ErrorKind::Io);
    CHECK_MSG(contains(msg, "'" + target + "'"), (msg));
    CHECK_EQ(entries(tmp.path()), std::vector<std::string>{"taken"});
    CHECK_EQ(mantissa::read_file((target + "/inside")), std::string("keep"));

    // A parent that is a file, not a folder.
    const std::string file = tmp.file("plain");
    writeBytes(file, "x");
    const std::string msg2 =
        error_of([&] { mantissa::write_file_atomic((file + "/exp.json"), "data"); }, ErrorKind::Io);
    CHECK_MSG(contains(msg2, file + "/exp.json"), (msg2));
    CHECK_MSG(contains(msg2, "Not a directory"), (msg2));
}

void TestData::readFileErrors() {
    TempDir tmp;
    const std::string missing = tmp.file("missing.json");
    std::string msg = error_of([&] { mantissa::read_file(missing); }, ErrorKind::Io);
    CHECK_MSG(contains(msg, "'" + missing + "'"), (msg));
    CHECK_MSG(contains(msg, "No such file or directory"), (msg));
    msg = error_of([&] { mantissa::read_file(tmp.path()); }, ErrorKind::Io);
    CHECK_MSG(contains(msg, "Is a directory"), (msg));
}

MANTISSA_TEST_MAIN(TestData, realMnistLoads, findDataDirOrder, badIdx, badMnist, missingFolder,
                   badDataFolder, atomicWriteCreatesAndOverwrites, atomicWriteUnwritableFolder,
                   atomicWriteFailureLeavesNoTemp, readFileErrors)
