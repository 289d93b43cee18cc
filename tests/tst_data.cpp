// Tests for the data layer: the real MNIST files, every kind of corrupt IDX file, data-folder
// lookup, and the atomic file writer. Bad files are generated so each check is hit on purpose.
#include <QtTest>

#include "tests/error_capture.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <cstdint>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/data/idx.h"
#include "core/data/mnist.h"
#include "core/error.h"
#include "core/io/atomic_file.h"

using mantissa::Error;
using mantissa::ErrorKind;

using mantissa::test::errorOf;

namespace {

QByteArray be32(std::uint32_t v) {
    QByteArray b(4, '\0');
    b[0] = char(v >> 24);
    b[1] = char(v >> 16);
    b[2] = char(v >> 8);
    b[3] = char(v);
    return b;
}

// An IDX file: magic (two zero bytes, type, rank), big-endian dimensions, `payload` data bytes.
QByteArray idx(unsigned type, unsigned rank, const std::vector<std::uint32_t>& dims,
               qsizetype payload, char fill = 0) {
    QByteArray b;
    b.append('\0').append('\0').append(char(type)).append(char(rank));
    for (std::uint32_t d : dims) b.append(be32(d));
    b.append(QByteArray(payload, fill));
    return b;
}

void writeBytes(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    QCOMPARE(f.write(bytes), bytes.size());
}

// A small but well-formed MNIST split: n images of 28x28 and n labels.
void writeSplit(const QString& dir, const char* images, const char* labels, std::uint32_t n,
                std::uint32_t labelCount, char label = 3) {
    writeBytes(dir + "/" + images, idx(0x08, 3, {n, 28, 28}, qsizetype(n) * 784, char(7)));
    writeBytes(dir + "/" + labels, idx(0x08, 1, {labelCount}, labelCount, label));
}

QStringList entries(const QString& dir) {
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
}

} // namespace

class TestData : public QObject {
    Q_OBJECT

private slots:
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
    if (!QFile::exists(QString::fromStdString(dir + "/train-images-idx3-ubyte")))
        QSKIP(qPrintable("MNIST not found in " + QString::fromStdString(dir) +
                         "; run ./mantissa.sh to fetch it"));
    const mantissa::Mnist m = mantissa::load_mnist(dir);
    QCOMPARE(m.train.count, std::int64_t{60000});
    QCOMPARE(m.test.count, std::int64_t{10000});
    QCOMPARE(m.train.rows, std::int64_t{28});
    QCOMPARE(m.train.cols, std::int64_t{28});
    QCOMPARE(m.train.images.size(), std::size_t{60000} * 784);
    QCOMPARE(m.test.images.size(), std::size_t{10000} * 784);
    QCOMPARE(m.train.labels.size(), std::size_t{60000});
    QCOMPARE(m.test.labels.size(), std::size_t{10000});
    int perDigit[10] = {};
    for (std::uint8_t l : m.train.labels) {
        QVERIFY(l <= 9);
        ++perDigit[l];
    }
    for (std::uint8_t l : m.test.labels) QVERIFY(l <= 9);
    // The training set's well-known class sizes: 5923 zeros ... 5949 nines.
    QCOMPARE(perDigit[0], 5923);
    QCOMPARE(perDigit[1], 6742);
    QCOMPARE(perDigit[9], 5949);
    // The first training digit is the famous "5", the first test digit a 7.
    QCOMPARE(int(m.train.labels[0]), 5);
    QCOMPARE(int(m.train.labels[1]), 0);
    QCOMPARE(int(m.test.labels[0]), 7);
    // Row 5, columns 12..23 of that "5": the top stroke as every MNIST tutorial prints it.
    const int row5[12] = {3, 18, 18, 18, 126, 136, 175, 26, 166, 255, 247, 127};
    for (int c = 0; c < 12; ++c) QCOMPARE(int(m.train.images[5 * 28 + 12 + c]), row5[c]);
    QCOMPARE(int(m.train.images[0]), 0);
}

void TestData::findDataDirOrder() {
    const QByteArray saved = qgetenv("MANTISSA_DATA");
    const bool hadEnv = qEnvironmentVariableIsSet("MANTISSA_DATA");
    qputenv("MANTISSA_DATA", "/from/env");
    QCOMPARE(mantissa::find_data_dir("/from/cli"), std::string("/from/cli"));
    QCOMPARE(mantissa::find_data_dir(""), std::string("/from/env"));
    qunsetenv("MANTISSA_DATA");
    const std::string fallback = mantissa::find_data_dir("");
    if (QDir(MANTISSA_SOURCE_DIR "/data/mnist").exists())
        QCOMPARE(fallback, std::string(MANTISSA_SOURCE_DIR "/data/mnist"));
    else
        QCOMPARE(fallback, std::string("data/mnist"));
    if (hadEnv) qputenv("MANTISSA_DATA", saved);
}

void TestData::badIdx_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("rank");
    QTest::addColumn<QString>("expected");

    QTest::newRow("empty file") << QByteArray() << 3 << "truncated";
    QTest::newRow("header cut short") << idx(0x08, 3, {2, 28}, 0) << 3 << "truncated header";
    QTest::newRow("truncated data")
        << idx(0x08, 3, {2, 28, 28}, 2 * 784 - 1) << 3 << "truncated: expected 1584 bytes";
    QTest::newRow("trailing bytes")
        << idx(0x08, 3, {2, 28, 28}, 2 * 784 + 1) << 3 << "trailing bytes: expected 1584 bytes";
    QByteArray badMagic = idx(0x08, 3, {2, 28, 28}, 2 * 784);
    badMagic[0] = char(0x1F);
    badMagic[1] = char(0x8B); // what a still-gzipped file starts with
    QTest::newRow("wrong magic") << badMagic << 3
                                 << "magic number is 0x1F8B0803, expected 0x00000803";
    QTest::newRow("wrong type code") << idx(0x0D, 3, {2, 28, 28}, 2 * 784 * 4) << 3
                                     << "type code is 0x0D (float32), expected 0x08";
    QTest::newRow("wrong rank") << idx(0x08, 2, {2, 784}, 2 * 784) << 3
                                << "has 2 dimensions, expected 3";
    QTest::newRow("labels given as images")
        << idx(0x08, 1, {2}, 2) << 3 << "has 1 dimensions, expected 3";
    QTest::newRow("zero dimension")
        << idx(0x08, 3, {0, 28, 28}, 0) << 3 << "dimension 0 is 0, expected a positive size";
    QTest::newRow("huge dimension") << idx(0x08, 3, {0xFFFFFFFFu, 28, 28}, 0) << 3
                                    << "dimension 0 is 4294967295, expected less than 16777216";
    QTest::newRow("product too large")
        << idx(0x08, 3, {16000000, 16000000, 28}, 0) << 3 << "multiply to more than";
    // Regression (fuzz/fuzz_idx): the first two stay just under 2^40 elements, the third
    // overflowed int64 in the product (UB) before the limit was checked.
    QTest::newRow("product overflows int64")
        << idx(0x08, 3, {172545, 6307840, 13275136}, 0) << 3 << "multiply to more than";
}

void TestData::badIdx() {
    QFETCH(QByteArray, bytes);
    QFETCH(int, rank);
    QFETCH(QString, expected);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString path = tmp.filePath("bad-idx3-ubyte");
    writeBytes(path, bytes);
    const QString msg =
        errorOf([&] { mantissa::read_idx_u8(path.toStdString(), rank); }, ErrorKind::Data);
    QVERIFY2(msg.startsWith(path + ": "), qPrintable(msg));
    QVERIFY2(msg.contains(expected), qPrintable(msg));
}

void TestData::badMnist_data() {
    QTest::addColumn<QString>("breakage");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("expected");

    QTest::newRow("label 11") << "label11"
                              << "train-labels-idx1-ubyte"
                              << "label 2 is 11, expected a digit 0..9";
    QTest::newRow("count mismatch") << "mismatch"
                                    << "train-labels-idx1-ubyte"
                                    << "holds 4 labels, but";
    QTest::newRow("not 28x28") << "27x28"
                               << "train-images-idx3-ubyte"
                               << "images are 27x28 pixels, expected 28x28";
    QTest::newRow("not 60000 images") << "none"
                                      << "train-images-idx3-ubyte"
                                      << "holds 5 images, expected 60000";
    QTest::newRow("missing file") << "missing"
                                  << "t10k-labels-idx1-ubyte"
                                  << "file not found. Run ./mantissa.sh";
    QTest::newRow("truncated test images") << "truncated"
                                           << "t10k-images-idx3-ubyte"
                                           << "truncated";
}

// Builds a small, consistent data folder and then breaks one thing in it.
void TestData::badMnist() {
    QFETCH(QString, breakage);
    QFETCH(QString, file);
    QFETCH(QString, expected);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString dir = tmp.path();
    writeSplit(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 5, 5);
    writeSplit(dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", 5, 5);

    if (breakage == "label11") {
        QByteArray labels = idx(0x08, 1, {5}, 5, 1);
        labels[8 + 2] = char(11);
        writeBytes(dir + "/train-labels-idx1-ubyte", labels);
    } else if (breakage == "mismatch") {
        writeSplit(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 5, 4);
    } else if (breakage == "27x28") {
        writeBytes(dir + "/train-images-idx3-ubyte", idx(0x08, 3, {5, 27, 28}, 5 * 27 * 28));
    } else if (breakage == "missing") {
        // The training split must load first, so make it the real size (47 MB, in a temp dir).
        writeSplit(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 60000, 60000);
        QVERIFY(QFile::remove(dir + "/t10k-labels-idx1-ubyte"));
    } else if (breakage == "truncated") {
        writeSplit(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 60000, 60000);
        writeBytes(dir + "/t10k-images-idx3-ubyte", idx(0x08, 3, {10000, 28, 28}, 10000 * 784 - 5));
    }
    const QString msg = errorOf([&] { mantissa::load_mnist(dir.toStdString()); }, ErrorKind::Data);
    QVERIFY2(msg.startsWith(dir + "/" + file + ": "), qPrintable(msg));
    QVERIFY2(msg.contains(expected), qPrintable(msg));
}

void TestData::missingFolder() {
    QTemporaryDir tmp;
    const QString dir = tmp.filePath("no-such-folder");
    const QString msg = errorOf([&] { mantissa::load_mnist(dir.toStdString()); }, ErrorKind::Data);
    QVERIFY2(msg.contains("'" + dir + "' does not exist"), qPrintable(msg));
    QVERIFY2(msg.contains("./mantissa.sh"), qPrintable(msg));
    QVERIFY2(msg.contains("--data DIR"), qPrintable(msg));
    QVERIFY2(msg.contains("MANTISSA_DATA"), qPrintable(msg));
}

// Data folders a user can point --data or MANTISSA_DATA at by mistake: each gives Error(Data)
// naming the path and what is wrong, never a std::filesystem exception (which the CLI would
// report as an "unexpected error" and the GUI as a bare system message).
void TestData::badDataFolder_data() {
    QTest::addColumn<QString>("layout");
    QTest::addColumn<QString>("named"); // relative to the temp dir
    QTest::addColumn<QString>("expected");
    QTest::newRow("empty folder") << "empty"
                                  << "/train-images-idx3-ubyte"
                                  << "file not found. Run ./mantissa.sh";
    QTest::newRow("a file, not a folder") << "file"
                                          << "/mnist"
                                          << "is not a folder";
    QTest::newRow("an IDX name that is a folder") << "dir-as-file"
                                                  << "/train-images-idx3-ubyte"
                                                  << "not a regular file";
    QTest::newRow("symlink loop") << "loop"
                                  << "/train-images-idx3-ubyte"
                                  << "symbolic links";
}

void TestData::badDataFolder() {
    QFETCH(QString, layout);
    QFETCH(QString, named);
    QFETCH(QString, expected);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    QString dir = tmp.path();
    if (layout == "file") {
        dir = tmp.filePath("mnist");
        writeBytes(dir, "not a folder");
        named = QString();
    } else if (layout == "dir-as-file") {
        QVERIFY(QDir(dir).mkdir("train-images-idx3-ubyte"));
        writeBytes(dir + "/train-labels-idx1-ubyte", idx(0x08, 1, {5}, 5, 1));
    } else if (layout == "loop") {
        // train-images -> a -> train-images: stat() fails with ELOOP, not ENOENT.
        QVERIFY(QFile::link(dir + "/a", dir + "/train-images-idx3-ubyte"));
        QVERIFY(QFile::link(dir + "/train-images-idx3-ubyte", dir + "/a"));
        writeBytes(dir + "/train-labels-idx1-ubyte", idx(0x08, 1, {5}, 5, 1));
    }
    const QString msg = errorOf([&] { mantissa::load_mnist(dir.toStdString()); }, ErrorKind::Data);
    QVERIFY2(msg.contains(named.isEmpty() ? dir : tmp.path() + named), qPrintable(msg));
    QVERIFY2(msg.contains(expected), qPrintable(msg));
}

void TestData::atomicWriteCreatesAndOverwrites() {
    QTemporaryDir tmp;
    const std::string path = tmp.filePath("exp.json").toStdString();
    mantissa::write_file_atomic(path, "first");
    QCOMPARE(mantissa::read_file(path), std::string("first"));
    mantissa::write_file_atomic(path, std::string("second\0with nul", 15));
    QCOMPARE(mantissa::read_file(path), std::string("second\0with nul", 15));
    mantissa::write_file_atomic(path, "");
    QCOMPARE(mantissa::read_file(path), std::string());
    const std::string big(3 << 20, 'x'); // several write() calls' worth
    mantissa::write_file_atomic(path, big);
    QCOMPARE(mantissa::read_file(path), big);
    QCOMPARE(entries(tmp.path()), QStringList{"exp.json"}); // no temp file left behind
}

void TestData::atomicWriteUnwritableFolder() {
    // /proc refuses new files even to root, so this case runs under CI (which is root) too.
    if (QFile::exists("/proc/version")) {
        const std::string before = mantissa::read_file("/proc/version");
        const QString msg =
            errorOf([] { mantissa::write_file_atomic("/proc/version", "x"); }, ErrorKind::Io);
        QVERIFY2(msg.contains("'/proc/version'"), qPrintable(msg));
        QCOMPARE(mantissa::read_file("/proc/version"), before);
    }
    // A read-only folder: the ordinary case for a user; root ignores permissions, so skip there.
    QTemporaryDir tmp;
    const QString dir = tmp.filePath("ro");
    QVERIFY(QDir().mkdir(dir));
    const std::string path = (dir + "/exp.json").toStdString();
    mantissa::write_file_atomic(path, "old");
    QVERIFY(QFile::setPermissions(dir, QFile::ReadOwner | QFile::ExeOwner));
    if (::geteuid() == 0) {
        QFile::setPermissions(dir, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        QSKIP("running as root: a read-only folder is still writable (the /proc case ran)");
    }
    const QString msg = errorOf([&] { mantissa::write_file_atomic(path, "new"); }, ErrorKind::Io);
    QFile::setPermissions(dir, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    QVERIFY2(msg.contains(QString::fromStdString(path)), qPrintable(msg));
    QVERIFY2(msg.contains("Permission denied"), qPrintable(msg));
    QCOMPARE(mantissa::read_file(path), std::string("old"));
    QCOMPARE(entries(dir), QStringList{"exp.json"});
}

void TestData::atomicWriteFailureLeavesNoTemp() {
    // The rename fails (the target is a non-empty folder) after the temp file was written:
    // the temp file must be gone and the folder untouched.
    QTemporaryDir tmp;
    const QString target = tmp.filePath("taken");
    QVERIFY(QDir().mkdir(target));
    writeBytes(target + "/inside", "keep");
    const QString msg =
        errorOf([&] { mantissa::write_file_atomic(target.toStdString(), "data"); }, ErrorKind::Io);
    QVERIFY2(msg.contains("'" + target + "'"), qPrintable(msg));
    QCOMPARE(entries(tmp.path()), QStringList{"taken"});
    QCOMPARE(mantissa::read_file((target + "/inside").toStdString()), std::string("keep"));

    // A parent that is a file, not a folder.
    const QString file = tmp.filePath("plain");
    writeBytes(file, "x");
    const QString msg2 =
        errorOf([&] { mantissa::write_file_atomic((file + "/exp.json").toStdString(), "data"); },
                ErrorKind::Io);
    QVERIFY2(msg2.contains(file + "/exp.json"), qPrintable(msg2));
    QVERIFY2(msg2.contains("Not a directory"), qPrintable(msg2));
}

void TestData::readFileErrors() {
    QTemporaryDir tmp;
    const QString missing = tmp.filePath("missing.json");
    QString msg = errorOf([&] { mantissa::read_file(missing.toStdString()); }, ErrorKind::Io);
    QVERIFY2(msg.contains("'" + missing + "'"), qPrintable(msg));
    QVERIFY2(msg.contains("No such file or directory"), qPrintable(msg));
    msg = errorOf([&] { mantissa::read_file(tmp.path().toStdString()); }, ErrorKind::Io);
    QVERIFY2(msg.contains("Is a directory"), qPrintable(msg));
}

QTEST_GUILESS_MAIN(TestData)
#include "tst_data.moc"
