// Runs the real mantissa-cli binary for the CLI test suites and captures its exit status and
// output. Header-only so each tst_*.cpp stays one executable.
#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

namespace mantissa::test {

struct CliRun {
    int status = -1; // exit code; -1 when it crashed or timed out
    QString out, err;
};

inline CliRun run_cli(const QStringList& args, int timeout_ms = 300000) {
    QProcess process;
    process.start(QStringLiteral(MANTISSA_CLI_PATH), args);
    CliRun run;
    if (!process.waitForFinished(timeout_ms)) {
        process.kill();
        process.waitForFinished();
        run.err = "timed out";
        return run;
    }
    run.status = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

} // namespace mantissa::test
