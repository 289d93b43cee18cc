// ExperimentForm: the run settings: the experiment's name, global policy (with what it trades)
// and a quantised policy's recipe (RecipeEditor), loss scaling (mode, initial scale, growth
// interval; Keras and PyTorch presets), optimizer (type, learning rate and its parameters), batch
// size, epochs, step limit, histogram interval, what to do on divergence, seed, and TF32 / graph
// switches (enabled for CUDA devices only).
#pragma once

#include <optional>

#include <QWidget>

#include "core/train/experiment.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace mantissa::ui {

class RecipeEditor;

class ExperimentForm final : public QWidget {
    Q_OBJECT

public:
    explicit ExperimentForm(QWidget* parent = nullptr);

    // Everything but the model and the device is read from / written to the form.
    void set_experiment(const Experiment& experiment);
    Experiment apply_to(Experiment experiment) const;
    void set_cuda_options_enabled(bool enabled);

signals:
    void changed();

private:
    void set_loss_scale(const LossScaleConfig& config);
    void set_optimizer(const OptimizerConfig& config);
    void reset_optimizer_to_defaults();
    void update_visibility();
    // The schedule the combo and the options line describe; nullopt (and the reason in `error`)
    // while the line does not parse. `base` is the learning-rate box's value on the way in.
    std::optional<LearningRateSchedule> parsed_schedule(double& base, QString* error) const;
    void update_schedule_note();
    void notify();

    bool m_filling = false;       // set_experiment is filling the form: no changed()
    LossScaleConfig m_loss_scale; // factor and floor, which the form does not show
    OptimizerConfig m_optimizer;  // fields of the type that the form does not show

    QLineEdit* m_name = nullptr;
    QComboBox* m_policy = nullptr;
    QLabel* m_policy_note = nullptr;
    RecipeEditor* m_recipe = nullptr;
    QComboBox* m_loss_mode = nullptr;
    QDoubleSpinBox* m_loss_initial = nullptr;
    QSpinBox* m_growth_interval = nullptr;
    QFormLayout* m_loss_form = nullptr;
    QComboBox* m_optimizer_type = nullptr;
    QComboBox* m_convention = nullptr;
    QLabel* m_convention_note = nullptr; // the chosen convention's one line
    QDoubleSpinBox* m_learning_rate = nullptr;
    QComboBox* m_schedule = nullptr;         // Constant, ExponentialDecay, ..., OneCycle
    QLineEdit* m_schedule_options = nullptr; // "decay_steps=1000,alpha=0"
    QLabel* m_schedule_note = nullptr;       // what the schedule does, or why it does not parse
    LearningRateSchedule m_last_schedule;    // the last one the fields described
    QDoubleSpinBox* m_momentum = nullptr;
    QCheckBox* m_nesterov = nullptr;
    QDoubleSpinBox* m_rho = nullptr;
    QCheckBox* m_centered = nullptr;
    QDoubleSpinBox* m_beta_1 = nullptr;
    QDoubleSpinBox* m_beta_2 = nullptr;
    QLineEdit* m_epsilon = nullptr;
    QDoubleSpinBox* m_weight_decay = nullptr;
    QFormLayout* m_optimizer_form = nullptr;
    QSpinBox* m_batch_size = nullptr;
    QSpinBox* m_epochs = nullptr;
    QSpinBox* m_max_steps = nullptr;
    QSpinBox* m_histogram_every = nullptr;
    QComboBox* m_on_divergence = nullptr;
    QLineEdit* m_seed = nullptr;
    QCheckBox* m_tf32 = nullptr;
    QCheckBox* m_graph = nullptr;
};

} // namespace mantissa::ui
