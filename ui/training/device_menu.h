// DeviceMenu: the toolbar's engine picker. It lists every engine with its state ("CPU (Eigen…)",
// "NVIDIA H100 — qualified on 2026-11-25", "… — not checked", "CUDA engine built; no usable GPU:
// driver insufficient"), preselects the CPU unless a qualified GPU exists, and checks a GPU on
// request ("Check now") on a thread of its own, never the UI thread.
#pragma once

#include <QString>
#include <QWidget>
#include <atomic>

#include "core/device/device_selection.h"

class QComboBox;
class QThread;
class QToolButton;

namespace mantissa::ui {

class DeviceMenu final : public QWidget {
    Q_OBJECT

public:
    // `options` name the GPUs, cache and check to use; the default is the real ones (tests pass
    // fakes).
    explicit DeviceMenu(DeviceOpenOptions options = {}, QWidget* parent = nullptr);
    ~DeviceMenu() override; // waits for a check in progress

    // The engine picked: "cpu" or "cuda:N".
    QString current_id() const;
    bool gpu_selected() const { return current_id().startsWith("cuda"); }
    bool checking() const { return m_checking; }
    QComboBox* combo() const { return m_combo; }
    QToolButton* check_button() const { return m_check; }

    // Selects what an experiment's "device" asks for. "auto" picks the default (a qualified GPU,
    // else the CPU). Returns "" when the device can be had, else a sentence for the banner saying
    // what it asked for, why it cannot be had and that the CPU engine will be used.
    QString select_for_experiment(const QString& device);
    // Re-reads each engine's state (after a check, or when the cache changed).
    void refresh();

public slots:
    // Checks the selected GPU now (the op-case table against the CPU engine, then a short
    // training run) and stores the verdict; progress and the result come as signals.
    void check_now();

signals:
    void device_changed();
    void check_progress(const QString& message);
    void check_finished(bool passed, const QString& message);

private:
    void update_check_button();
    QString default_id() const;

    DeviceOpenOptions m_options;
    std::vector<DeviceState> m_states;
    QComboBox* m_combo = nullptr;
    QToolButton* m_check = nullptr;
    QThread* m_thread = nullptr;
    bool m_checking = false;
};

} // namespace mantissa::ui
