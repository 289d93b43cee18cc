// ExperimentForm: grouped QFormLayouts for precision, loss scaling, optimizer, training and CUDA.
// The optimizer's parameter rows are shown only for the types that use them.
#include "ui/editor/experiment_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDoubleValidator>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "core/numeric/policy.h"
#include "ui/editor/recipe_editor.h"

namespace mantissa::ui {

namespace {

QDoubleSpinBox* make_double(QWidget* parent, const char* name, double min, double max, int decimals,
                            double step, const QString& tip) {
    auto* spin = new QDoubleSpinBox(parent);
    spin->setObjectName(name);
    spin->setRange(min, max);
    spin->setDecimals(decimals);
    spin->setSingleStep(step);
    spin->setToolTip(tip);
    return spin;
}

QString number_text(double value) {
    return QString::number(value, 'g', 10);
}

} // namespace

ExperimentForm::ExperimentForm(QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);

    // --- name ---
    auto* name_form = new QFormLayout;
    m_name = new QLineEdit(this);
    m_name->setObjectName("experiment_name");
    m_name->setPlaceholderText(tr("untitled"));
    m_name->setToolTip(tr("The experiment's name; each run is named \"<name> · <policy>\"."));
    name_form->addRow(tr("Name"), m_name);
    outer->addLayout(name_form);

    // --- precision ---
    auto* precision = new QGroupBox(tr("Precision"), this);
    auto* precision_form = new QFormLayout(precision);
    m_policy = new QComboBox(precision);
    m_policy->setObjectName("policy");
    for (const Policy& policy : all_policies()) {
        m_policy->addItem(QString::fromStdString(policy.name), QString::fromStdString(policy.name));
        m_policy->setItemData(m_policy->count() - 1,
                              QString::fromStdString(policy_description(policy)), Qt::ToolTipRole);
    }
    m_policy->setToolTip(tr("The global dtype policy: which dtype layers compute in and which "
                            "their variables are stored in."));
    precision_form->addRow(tr("Policy"), m_policy);
    // The chosen policy's trade-off, always visible (the same text as `mantissa-cli policies`).
    m_policy_note = new QLabel(precision);
    m_policy_note->setObjectName("policy_description");
    m_policy_note->setWordWrap(true);
    precision_form->addRow(QString(), m_policy_note);
    outer->addWidget(precision);
    m_recipe = new RecipeEditor(this); // shown for the quantised policies only
    outer->addWidget(m_recipe);

    // --- loss scaling ---
    auto* loss = new QGroupBox(tr("Loss scaling"), this);
    m_loss_form = new QFormLayout(loss);
    m_loss_mode = new QComboBox(loss);
    m_loss_mode->setObjectName("loss_scale_mode");
    const std::pair<LossScaleMode, QString> modes[] = {
        {LossScaleMode::Auto, tr("auto: dynamic for float16 compute, none otherwise.")},
        {LossScaleMode::Dynamic, tr("dynamic: grows the scale after a run of finite steps, halves "
                                    "it and skips the step on inf/NaN.")},
        {LossScaleMode::Fixed, tr("fixed: always multiplies the loss by the initial scale.")},
        {LossScaleMode::None, tr("none: no scaling; small float16 gradients may underflow.")}};
    for (const auto& [mode, tip] : modes) {
        m_loss_mode->addItem(QString::fromLatin1(loss_scale_mode_name(mode)),
                             static_cast<int>(mode));
        m_loss_mode->setItemData(m_loss_mode->count() - 1, tip, Qt::ToolTipRole);
    }
    m_loss_mode->setToolTip(tr("Multiplies the loss before backprop so small float16 gradients "
                               "do not flush to zero, then divides the gradients back."));
    m_loss_form->addRow(tr("Mode"), m_loss_mode);
    m_loss_initial = make_double(loss, "loss_scale_initial", 1.0, 1e12, 1, 1024.0,
                                 tr("The first loss scale (Keras 2^15 = 32768, PyTorch 2^16)."));
    m_loss_form->addRow(tr("Initial scale"), m_loss_initial);
    m_growth_interval = new QSpinBox(loss);
    m_growth_interval->setObjectName("growth_interval");
    m_growth_interval->setRange(1, 1000000);
    m_growth_interval->setToolTip(tr("Consecutive finite steps before the dynamic scale doubles."));
    m_loss_form->addRow(tr("Growth interval"), m_growth_interval);
    auto* presets = new QHBoxLayout;
    auto* keras = new QPushButton(tr("Keras defaults"), loss);
    keras->setObjectName("keras_defaults");
    keras->setToolTip(tr("Dynamic, initial 2^15, growth every 2000 steps, x2, floor 1."));
    auto* pytorch = new QPushButton(tr("PyTorch preset"), loss);
    pytorch->setObjectName("pytorch_preset");
    pytorch->setToolTip(tr("GradScaler: dynamic, initial 2^16, growth every 2000 steps, x2."));
    presets->addWidget(keras);
    presets->addWidget(pytorch);
    presets->addStretch(1);
    m_loss_form->addRow(QString(), presets);
    connect(keras, &QPushButton::clicked, this, [this] {
        set_loss_scale(keras_loss_scale());
        notify();
    });
    connect(pytorch, &QPushButton::clicked, this, [this] {
        set_loss_scale(pytorch_loss_scale());
        notify();
    });
    outer->addWidget(loss);

    // --- optimizer ---
    auto* optimizer = new QGroupBox(tr("Optimizer"), this);
    m_optimizer_form = new QFormLayout(optimizer);
    m_optimizer_type = new QComboBox(optimizer);
    m_optimizer_type->setObjectName("optimizer_type");
    const std::pair<OptimizerType, QString> types[] = {
        {OptimizerType::SGD, tr("SGD: plain gradient descent, optionally with momentum.")},
        {OptimizerType::RMSprop, tr("RMSprop: divides by a running average of squared "
                                    "gradients (Keras's default).")},
        {OptimizerType::Adam, tr("Adam: momentum plus per-weight adaptive step sizes.")},
        {OptimizerType::AdamW, tr("AdamW: Adam with decoupled weight decay.")}};
    for (const auto& [type, tip] : types) {
        m_optimizer_type->addItem(QString::fromLatin1(optimizer_type_name(type)),
                                  static_cast<int>(type));
        m_optimizer_type->setItemData(m_optimizer_type->count() - 1, tip, Qt::ToolTipRole);
    }
    m_optimizer_type->setToolTip(tr("The update rule; switching resets its parameters to the "
                                    "convention's defaults and keeps the learning rate."));
    m_optimizer_form->addRow(tr("Type"), m_optimizer_type);
    m_convention = new QComboBox(optimizer);
    m_convention->setObjectName("convention");
    for (OptimizerConvention convention :
         {OptimizerConvention::Keras, OptimizerConvention::TfKeras2,
          OptimizerConvention::PyTorch}) {
        m_convention->addItem(QString::fromLatin1(optimizer_convention_name(convention)),
                              static_cast<int>(convention));
        m_convention->setItemData(m_convention->count() - 1,
                                  QString::fromLatin1(optimizer_convention_summary(convention)),
                                  Qt::ToolTipRole);
    }
    m_convention->setToolTip(tr("Whose update formulas: they differ in where epsilon sits, which "
                                "decides whether pure float16 trains. Switching resets the "
                                "parameters to that convention's defaults and keeps the "
                                "learning rate."));
    m_optimizer_form->addRow(tr("Convention"), m_convention);
    m_convention_note = new QLabel(optimizer);
    m_convention_note->setObjectName("convention_note");
    m_convention_note->setWordWrap(true);
    m_optimizer_form->addRow(QString(), m_convention_note);
    m_learning_rate = make_double(optimizer, "learning_rate", 0.000001, 10.0, 6, 0.0001,
                                  tr("Step size of each update."));
    m_optimizer_form->addRow(tr("Learning rate"), m_learning_rate);
    m_schedule = new QComboBox(optimizer);
    m_schedule->setObjectName("schedule");
    const std::pair<ScheduleKind, QString> schedules[] = {
        {ScheduleKind::Constant, tr("The same learning rate every step.")},
        {ScheduleKind::ExponentialDecay,
         tr("Keras ExponentialDecay: rate x decay_rate^(step / decay_steps).")},
        {ScheduleKind::PiecewiseConstantDecay,
         tr("Keras PiecewiseConstantDecay: values[i] until boundaries[i]; the values are the "
            "rates.")},
        {ScheduleKind::CosineDecay,
         tr("Keras CosineDecay: half a cosine down to alpha x rate over decay_steps, after an "
            "optional linear warmup to warmup_target.")},
        {ScheduleKind::PolynomialDecay,
         tr("Keras PolynomialDecay: (rate - end) x (1 - step/decay_steps)^power + end.")},
        {ScheduleKind::OneCycle,
         tr("PyTorch OneCycleLR: up from rate/div_factor to the rate over pct_start of the run, "
            "then down to rate/div_factor/final_div_factor (total_steps 0: the whole run).")}};
    for (const auto& [kind, tip] : schedules) {
        m_schedule->addItem(kind == ScheduleKind::Constant
                                ? tr("constant")
                                : QString::fromLatin1(schedule_kind_name(kind)),
                            static_cast<int>(kind));
        m_schedule->setItemData(m_schedule->count() - 1, tip, Qt::ToolTipRole);
    }
    m_schedule->setToolTip(tr("How the learning rate changes over the run (drawn in the "
                              "Learning rate chart). Keras counts applied updates, so a "
                              "skipped step does not advance it; PyTorch counts every step."));
    m_optimizer_form->addRow(tr("Schedule"), m_schedule);
    m_schedule_options = new QLineEdit(optimizer);
    m_schedule_options->setObjectName("schedule_options");
    m_schedule_options->setPlaceholderText(tr("no fields: the same rate every step"));
    m_schedule_options->setToolTip(
        tr("The schedule's fields as key=value, separated by commas; lists with '/' "
           "(boundaries=500/900,values=0.01/0.001/0.0001)."));
    m_optimizer_form->addRow(tr("Fields"), m_schedule_options);
    m_schedule_note = new QLabel(optimizer);
    m_schedule_note->setObjectName("schedule_note");
    m_schedule_note->setWordWrap(true);
    m_optimizer_form->addRow(QString(), m_schedule_note);
    m_momentum = make_double(optimizer, "momentum", 0.0, 0.999, 3, 0.05,
                             tr("Fraction of the previous update carried into the next one."));
    m_optimizer_form->addRow(tr("Momentum"), m_momentum);
    m_nesterov = new QCheckBox(tr("Nesterov"), optimizer);
    m_nesterov->setObjectName("nesterov");
    m_nesterov->setToolTip(tr("Nesterov momentum: look ahead along the momentum before taking the "
                              "gradient."));
    m_optimizer_form->addRow(QString(), m_nesterov);
    m_rho = make_double(optimizer, "rho", 0.0, 0.9999, 4, 0.01,
                        tr("Decay of the running average of squared gradients."));
    m_optimizer_form->addRow(tr("rho"), m_rho);
    m_centered = new QCheckBox(tr("Centered"), optimizer);
    m_centered->setObjectName("centered");
    m_centered->setToolTip(tr("Normalise by the gradient's variance instead of its second "
                              "moment."));
    m_optimizer_form->addRow(QString(), m_centered);
    m_beta_1 = make_double(optimizer, "beta_1", 0.0, 0.9999, 4, 0.01,
                           tr("Decay of the running average of gradients (first moment)."));
    m_optimizer_form->addRow(tr("beta_1"), m_beta_1);
    m_beta_2 = make_double(optimizer, "beta_2", 0.0, 0.99999, 5, 0.001,
                           tr("Decay of the running average of squared gradients (second "
                              "moment)."));
    m_optimizer_form->addRow(tr("beta_2"), m_beta_2);
    m_epsilon = new QLineEdit(optimizer);
    m_epsilon->setObjectName("epsilon");
    auto* epsilon_validator = new QDoubleValidator(1e-20, 1.0, 12, m_epsilon);
    epsilon_validator->setNotation(QDoubleValidator::ScientificNotation);
    epsilon_validator->setLocale(QLocale::c());
    m_epsilon->setValidator(epsilon_validator);
    m_epsilon->setToolTip(tr("Small constant added to the denominator to avoid dividing by zero "
                             "(e.g. 1e-7)."));
    m_optimizer_form->addRow(tr("epsilon"), m_epsilon);
    m_weight_decay = make_double(optimizer, "weight_decay", 0.0, 1.0, 6, 0.001,
                                 tr("Decoupled weight decay: each step shrinks weights by "
                                    "learning rate x this."));
    m_optimizer_form->addRow(tr("Weight decay"), m_weight_decay);
    outer->addWidget(optimizer);

    // --- training ---
    auto* training = new QGroupBox(tr("Training"), this);
    auto* training_form = new QFormLayout(training);
    m_batch_size = new QSpinBox(training);
    m_batch_size->setObjectName("batch_size");
    m_batch_size->setRange(1, 65536);
    m_batch_size->setToolTip(tr("Examples per step; larger batches use the GPU better."));
    training_form->addRow(tr("Batch size"), m_batch_size);
    m_epochs = new QSpinBox(training);
    m_epochs->setObjectName("epochs");
    m_epochs->setRange(1, 1000);
    m_epochs->setToolTip(tr("Passes over the 60,000 training images."));
    training_form->addRow(tr("Epochs"), m_epochs);
    m_max_steps = new QSpinBox(training);
    m_max_steps->setObjectName("max_steps");
    m_max_steps->setRange(0, std::numeric_limits<int>::max());
    m_max_steps->setSpecialValueText(tr("no limit"));
    m_max_steps->setSingleStep(100);
    m_max_steps->setToolTip(tr("Stop after this many steps even inside an epoch; \"no limit\" "
                               "(0) trains the whole epochs."));
    training_form->addRow(tr("Max steps"), m_max_steps);
    m_histogram_every = new QSpinBox(training);
    m_histogram_every->setObjectName("histogram_every");
    m_histogram_every->setRange(0, 1000000);
    m_histogram_every->setSpecialValueText(tr("off"));
    m_histogram_every->setSingleStep(10);
    m_histogram_every->setToolTip(tr("Bin the gradients for the Gradients tab every this many "
                                     "steps (one extra forward and backward pass each time: 50 "
                                     "costs about 2%); \"off\" (0) never."));
    training_form->addRow(tr("Histogram every"), m_histogram_every);
    m_on_divergence = new QComboBox(training);
    m_on_divergence->setObjectName("on_divergence");
    m_on_divergence->addItem(tr("stop"), static_cast<int>(DivergencePolicy::Stop));
    m_on_divergence->setItemData(0, tr("stop: end the run at the first inf/NaN loss."),
                                 Qt::ToolTipRole);
    m_on_divergence->addItem(tr("continue"), static_cast<int>(DivergencePolicy::Continue));
    m_on_divergence->setItemData(1,
                                 tr("continue: mark the run diverged and keep training, to "
                                    "watch what happens next."),
                                 Qt::ToolTipRole);
    m_on_divergence->setToolTip(tr("What to do when the training loss becomes inf or NaN."));
    training_form->addRow(tr("On divergence"), m_on_divergence);
    m_seed = new QLineEdit(training);
    m_seed->setObjectName("seed");
    m_seed->setValidator(
        new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9]{1,19}")), m_seed));
    m_seed->setToolTip(tr("Seeds weight init, shuffling and dropout: the same seed repeats the "
                          "run exactly."));
    training_form->addRow(tr("Seed"), m_seed);
    outer->addWidget(training);

    // --- CUDA ---
    auto* cuda = new QGroupBox(tr("CUDA"), this);
    auto* cuda_form = new QFormLayout(cuda);
    m_tf32 = new QCheckBox(tr("TF32 matmuls"), cuda);
    m_tf32->setObjectName("tf32");
    m_tf32->setToolTip(tr("Run float32 matrix products on tensor cores with a 10-bit mantissa: "
                          "faster, slightly less precise (CUDA only)."));
    m_graph = new QCheckBox(tr("CUDA Graph capture"), cuda);
    m_graph->setObjectName("graph");
    m_graph->setToolTip(tr("Record one training step as a CUDA Graph and replay it, cutting "
                           "launch overhead (CUDA only)."));
    cuda_form->addRow(m_tf32);
    cuda_form->addRow(m_graph);
    outer->addWidget(cuda);
    outer->addStretch(1);
    set_cuda_options_enabled(false);

    // --- change notifications ---
    connect(m_policy, &QComboBox::currentIndexChanged, this, [this] {
        m_policy_note->setText(m_policy->currentData(Qt::ToolTipRole).toString());
        if (!m_filling) m_recipe->set_policy(m_policy->currentData().toString());
        notify();
    });
    connect(m_recipe, &RecipeEditor::changed, this, [this] { notify(); });
    connect(m_on_divergence, &QComboBox::currentIndexChanged, this, [this] { notify(); });
    connect(m_loss_mode, &QComboBox::currentIndexChanged, this, [this] {
        update_visibility();
        notify();
    });
    connect(m_optimizer_type, &QComboBox::currentIndexChanged, this,
            [this] { reset_optimizer_to_defaults(); });
    // Another schedule starts from its defaults; editing the fields re-describes it.
    connect(m_schedule, &QComboBox::currentIndexChanged, this, [this] {
        if (m_filling) return;
        const auto kind = static_cast<ScheduleKind>(m_schedule->currentData().toInt());
        m_schedule_options->setText(
            QString::fromStdString(schedule_options_text(default_schedule(kind))));
        m_schedule_options->setCursorPosition(0);
        update_visibility();
        notify();
    });
    connect(m_learning_rate, &QDoubleSpinBox::valueChanged, this,
            [this] { update_schedule_note(); });
    connect(m_schedule_options, &QLineEdit::textEdited, this, [this] {
        update_schedule_note();
        notify();
    });
    // Another convention brings its own defaults (as another type does); the rate stays.
    connect(m_convention, &QComboBox::currentIndexChanged, this,
            [this] { reset_optimizer_to_defaults(); });
    for (QDoubleSpinBox* spin :
         {m_loss_initial, m_learning_rate, m_momentum, m_rho, m_beta_1, m_beta_2, m_weight_decay})
        connect(spin, &QDoubleSpinBox::valueChanged, this, [this] { notify(); });
    for (QSpinBox* spin :
         {m_growth_interval, m_batch_size, m_epochs, m_max_steps, m_histogram_every})
        connect(spin, &QSpinBox::valueChanged, this, [this] { notify(); });
    for (QCheckBox* box : {m_nesterov, m_centered, m_tf32, m_graph})
        connect(box, &QCheckBox::toggled, this, [this] { notify(); });
    for (QLineEdit* edit : {m_name, m_epsilon, m_seed})
        connect(edit, &QLineEdit::textEdited, this, [this] { notify(); });

    set_experiment(Experiment{});
}

void ExperimentForm::notify() {
    if (!m_filling) emit changed();
}

void ExperimentForm::set_loss_scale(const LossScaleConfig& config) {
    const bool was_filling = m_filling;
    m_filling = true;
    m_loss_scale = config;
    m_loss_mode->setCurrentIndex(m_loss_mode->findData(static_cast<int>(config.mode)));
    m_loss_initial->setValue(config.initial);
    m_growth_interval->setValue(config.growth_interval);
    m_filling = was_filling;
    update_visibility();
}

void ExperimentForm::set_optimizer(const OptimizerConfig& config) {
    const bool was_filling = m_filling;
    m_filling = true;
    m_optimizer = config;
    m_optimizer_type->setCurrentIndex(m_optimizer_type->findData(static_cast<int>(config.type)));
    m_convention->setCurrentIndex(m_convention->findData(static_cast<int>(config.convention)));
    m_convention_note->setText(m_convention->currentData(Qt::ToolTipRole).toString());
    m_learning_rate->setValue(config.learning_rate);
    m_momentum->setValue(config.momentum);
    m_nesterov->setChecked(config.nesterov);
    m_rho->setValue(config.rho);
    m_centered->setChecked(config.centered);
    m_beta_1->setValue(config.beta_1);
    m_beta_2->setValue(config.beta_2);
    m_epsilon->setText(number_text(config.epsilon));
    m_weight_decay->setValue(config.weight_decay);
    m_schedule->setCurrentIndex(m_schedule->findData(static_cast<int>(config.schedule.kind)));
    m_schedule_options->setText(QString::fromStdString(schedule_options_text(config.schedule)));
    m_schedule_options->setCursorPosition(0); // the first fields, not the end of the line
    m_filling = was_filling;
    update_visibility();
}

std::optional<LearningRateSchedule> ExperimentForm::parsed_schedule(double& base,
                                                                    QString* error) const {
    const auto kind = static_cast<ScheduleKind>(m_schedule->currentData().toInt());
    if (kind == ScheduleKind::Constant) return LearningRateSchedule{};
    const std::string options = m_schedule_options->text().simplified().remove(' ').toStdString();
    try {
        return schedule_from_spec(
            std::string(schedule_kind_name(kind)) + (options.empty() ? "" : ":" + options), base);
    } catch (const Error& e) {
        if (error) *error = QString::fromStdString(e.what());
        return std::nullopt;
    }
}

void ExperimentForm::update_schedule_note() {
    double base = m_learning_rate->value();
    QString error;
    const std::optional<LearningRateSchedule> schedule = parsed_schedule(base, &error);
    if (schedule) {
        m_last_schedule = *schedule;
        m_schedule_note->setStyleSheet(QString());
        m_schedule_note->setText(QString::fromStdString(describe_schedule(*schedule, base)));
    } else {
        // The run keeps the last schedule that parsed; say so next to the field.
        m_schedule_note->setStyleSheet(QStringLiteral("color: #c0392b;"));
        m_schedule_note->setText(
            tr("%1 (runs use the last valid schedule until this is fixed)").arg(error));
    }
}

void ExperimentForm::reset_optimizer_to_defaults() {
    if (m_filling) return;
    const auto type = static_cast<OptimizerType>(m_optimizer_type->currentData().toInt());
    OptimizerConfig config = optimizer_defaults(
        type, static_cast<OptimizerConvention>(m_convention->currentData().toInt()));
    config.learning_rate = m_learning_rate->value();
    double base = config.learning_rate;
    if (std::optional<LearningRateSchedule> schedule = parsed_schedule(base, nullptr))
        config.schedule = *schedule;
    set_optimizer(config);
    notify();
}

void ExperimentForm::update_visibility() {
    const auto mode = static_cast<LossScaleMode>(m_loss_mode->currentData().toInt());
    m_loss_initial->setEnabled(mode != LossScaleMode::None);
    m_growth_interval->setEnabled(mode == LossScaleMode::Auto || mode == LossScaleMode::Dynamic);

    const auto type = static_cast<OptimizerType>(m_optimizer_type->currentData().toInt());
    const bool sgd = type == OptimizerType::SGD, rms = type == OptimizerType::RMSprop;
    const bool adam = type == OptimizerType::Adam || type == OptimizerType::AdamW;
    m_optimizer_form->setRowVisible(m_momentum, sgd || rms);
    m_optimizer_form->setRowVisible(m_nesterov, sgd);
    m_optimizer_form->setRowVisible(m_rho, rms);
    m_optimizer_form->setRowVisible(m_centered, rms);
    m_optimizer_form->setRowVisible(m_beta_1, adam);
    m_optimizer_form->setRowVisible(m_beta_2, adam);
    m_optimizer_form->setRowVisible(m_epsilon, !sgd);
    m_optimizer_form->setRowVisible(m_weight_decay, type == OptimizerType::AdamW);

    // The rate box is the schedule's base: Keras's initial_learning_rate, OneCycle's max_lr;
    // PiecewiseConstantDecay's values are the rates themselves.
    const auto kind = static_cast<ScheduleKind>(m_schedule->currentData().toInt());
    auto* rate_label = qobject_cast<QLabel*>(m_optimizer_form->labelForField(m_learning_rate));
    if (rate_label)
        rate_label->setText(kind == ScheduleKind::Constant   ? tr("Learning rate")
                            : kind == ScheduleKind::OneCycle ? tr("Peak rate (max_lr)")
                                                             : tr("Initial rate"));
    m_learning_rate->setEnabled(kind != ScheduleKind::PiecewiseConstantDecay);
    // Always shown (rows that appear and vanish would move the form under the pointer): a
    // constant rate has no fields to edit.
    m_schedule_options->setEnabled(kind != ScheduleKind::Constant);
    update_schedule_note();
}

void ExperimentForm::set_experiment(const Experiment& experiment) {
    m_filling = true;
    m_name->setText(QString::fromStdString(experiment.name));
    const QString policy = QString::fromStdString(experiment.policy);
    int index = m_policy->findData(policy);
    if (index < 0) {
        m_policy->addItem(policy, policy);
        index = m_policy->count() - 1;
    }
    m_policy->setCurrentIndex(index);
    m_policy_note->setText(m_policy->currentData(Qt::ToolTipRole).toString());
    m_recipe->set_recipe(policy, experiment.recipe);
    set_loss_scale(experiment.loss_scale);
    set_optimizer(experiment.optimizer);
    m_batch_size->setValue(static_cast<int>(experiment.batch_size));
    m_epochs->setValue(experiment.epochs);
    // Beyond the spin box's range: its largest value, which still limits nothing in practice.
    m_max_steps->setValue(
        static_cast<int>(std::min<std::int64_t>(experiment.max_steps, m_max_steps->maximum())));
    m_histogram_every->setValue(static_cast<int>(
        std::min<std::int64_t>(experiment.histogram_every, m_histogram_every->maximum())));
    m_on_divergence->setCurrentIndex(
        m_on_divergence->findData(static_cast<int>(experiment.on_divergence)));
    m_seed->setText(QString::number(experiment.seed));
    m_tf32->setChecked(experiment.tf32);
    m_graph->setChecked(experiment.graph);
    m_filling = false;
    update_visibility();
}

Experiment ExperimentForm::apply_to(Experiment experiment) const {
    const QString name = m_name->text().trimmed();
    experiment.name = name.isEmpty() ? std::string("untitled") : name.toStdString();
    experiment.policy = m_policy->currentData().toString().toStdString();
    experiment.recipe = m_recipe->options();

    LossScaleConfig loss = m_loss_scale;
    loss.mode = static_cast<LossScaleMode>(m_loss_mode->currentData().toInt());
    loss.initial = m_loss_initial->value();
    loss.growth_interval = m_growth_interval->value();
    experiment.loss_scale = loss;

    OptimizerConfig opt = m_optimizer;
    opt.type = static_cast<OptimizerType>(m_optimizer_type->currentData().toInt());
    opt.convention = static_cast<OptimizerConvention>(m_convention->currentData().toInt());
    opt.learning_rate = m_learning_rate->value();
    opt.momentum = m_momentum->value();
    opt.nesterov = m_nesterov->isChecked();
    opt.rho = m_rho->value();
    opt.centered = m_centered->isChecked();
    opt.beta_1 = m_beta_1->value();
    opt.beta_2 = m_beta_2->value();
    bool ok = false;
    const double epsilon = QLocale::c().toDouble(m_epsilon->text(), &ok);
    if (ok && epsilon > 0) opt.epsilon = epsilon;
    opt.weight_decay = m_weight_decay->value();
    double base = opt.learning_rate;
    if (std::optional<LearningRateSchedule> schedule = parsed_schedule(base, nullptr)) {
        opt.schedule = *schedule;
        opt.learning_rate = base;
    } else {
        opt.schedule = m_last_schedule; // the fields are mid-edit: the last one they described
    }
    experiment.optimizer = opt;

    experiment.batch_size = m_batch_size->value();
    experiment.epochs = m_epochs->value();
    // A value the spin box could not show (a file's 10^12 steps) is kept as it was.
    if (m_max_steps->value() < m_max_steps->maximum() ||
        experiment.max_steps < m_max_steps->maximum())
        experiment.max_steps = m_max_steps->value();
    if (m_histogram_every->value() < m_histogram_every->maximum() ||
        experiment.histogram_every < m_histogram_every->maximum())
        experiment.histogram_every = m_histogram_every->value();
    experiment.on_divergence =
        static_cast<DivergencePolicy>(m_on_divergence->currentData().toInt());
    const qulonglong seed = m_seed->text().toULongLong(&ok);
    if (ok) experiment.seed = seed;
    experiment.tf32 = m_tf32->isChecked();
    experiment.graph = m_graph->isChecked();
    return experiment;
}

void ExperimentForm::set_cuda_options_enabled(bool enabled) {
    m_tf32->setEnabled(enabled);
    m_graph->setEnabled(enabled);
}

} // namespace mantissa::ui
