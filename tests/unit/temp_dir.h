// TempDir: a fresh folder under $TMPDIR for one test, removed with everything in it when the
// object goes (the Qt-free suites' QTemporaryDir).
#pragma once

#include <string>

namespace mantissa::unit {

class TempDir {
public:
    TempDir();  // throws std::runtime_error when no folder can be made
    ~TempDir(); // removes the folder and its contents
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::string& path() const { return m_path; }
    // `name` inside the folder ("a/b.json" -> "<path>/a/b.json").
    std::string file(const std::string& name) const { return m_path + "/" + name; }

private:
    std::string m_path;
};

} // namespace mantissa::unit
