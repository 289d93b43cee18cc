// RecipeEditor: every rule about which field applies, and what it defaults to, is asked of
// make_recipe() itself rather than repeated here, so the editor cannot drift from the core:
// - a field is offered when some value of its control is accepted and changes the recipe
//   (recipe.history_len only under kind "delayed", recipe.weight_2d only for nvfp4, ...);
// - an unset field shows the value whose recipe equals the recipe without it (the default);
// - a value equal to the default is left unset, so the experiment JSON holds only what the user
//   changed: it reads back to the same recipe, and follows the core if a default ever changes.
// A new RecipeOptions field is therefore one add_flag / add_choice call in the constructor.
#include "ui/editor/recipe_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QSpinBox>
#include <exception>

#include "ui/float_lab/lab_style.h"

namespace mantissa::ui {

namespace {

// The recipe with each block scale rule spelled out: an explicit "floor" on an MX policy then
// equals the unset default.
QuantRecipe resolved(QuantRecipe recipe) {
    for (QuantSpec* spec : {&recipe.activation, &recipe.weight, &recipe.gradient})
        if (spec->scaling == QuantScaling::Block)
            spec->block.rule =
                spec->block.rule.value_or(block_format_spec(spec->block.format).default_rule);
    return recipe;
}

std::optional<QuantRecipe> recipe_of(const QString& policy, const RecipeOptions& options) {
    try {
        return resolved(make_recipe(policy.toStdString(), options));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// Whether the recipe draws on its seed: stochastic rounding, or the Hadamard transform's signs.
bool uses_seed(const QuantRecipe& r) {
    return r.activation.block.stochastic || r.weight.block.stochastic ||
           r.gradient.block.stochastic || r.hadamard;
}

// The index of the first option set whose recipe equals `base` (the unset default), or -1.
int default_index(const QString& policy, const std::vector<RecipeOptions>& probes,
                  const std::optional<QuantRecipe>& base) {
    if (!base) return -1;
    for (std::size_t i = 0; i < probes.size(); ++i)
        if (recipe_of(policy, probes[i]) == base) return static_cast<int>(i);
    return -1;
}

} // namespace

RecipeEditor::RecipeEditor(QWidget* parent) : QGroupBox(tr("Recipe"), parent) {
    setObjectName("recipe");
    setToolTip(tr("How the quantised policy scales and rounds the inputs of every matrix "
                  "product; unset fields keep the policy's defaults."));
    m_form = new QFormLayout(this);

    // mixed_float8 (Transformer Engine's FP8 recipes).
    add_choice(&RecipeOptions::kind, "recipe_kind", tr("Scaling"),
               tr("How each FP8 tensor's scale is chosen before it is cast."),
               {{"delayed", tr("delayed"),
                 tr("Scale from the largest |value| (amax) seen over earlier steps, as "
                    "Transformer Engine does: a spike it has not seen yet overflows.")},
                {"current", tr("current"),
                 tr("Scale from the amax of the tensor being cast: no lag behind a spike, "
                    "at the cost of one more pass over the tensor.")},
                {"block", tr("block (1×128, 128×128)"),
                 tr("One power-of-two scale per 1×128 block of activations and gradients and "
                    "per 128×128 block of weights (the DeepSeek-V3 recipe).")}});
    add_choice(&RecipeOptions::fp8_format, "recipe_fp8_format", tr("FP8 format"),
               tr("Which 8-bit float the forward tensors and the gradients are cast to."),
               {{"hybrid", tr("hybrid: E4M3 forward, E5M2 gradients"),
                 tr("E4M3's precision for activations and weights, E5M2's range for the "
                    "gradients (Transformer Engine's HYBRID).")},
                {"e4m3", tr("E4M3 everywhere"),
                 tr("Gradients in E4M3 too: one more mantissa bit, but a largest value of 448 "
                    "instead of 57344.")}});
    add_number(&RecipeOptions::history_len, "recipe_history_len", tr("Amax history"),
               tr("How many earlier steps' amax the delayed scale remembers."), 1, 65536,
               [](const QuantRecipe& r) { return r.activation.history_len; });
    add_number(&RecipeOptions::margin, "recipe_margin", tr("Margin"),
               tr("Divides the scale by 2^margin, leaving headroom above the remembered amax."), 0,
               64, [](const QuantRecipe& r) { return r.activation.margin; });
    add_choice(&RecipeOptions::amax_compute, "recipe_amax_compute", tr("Amax from"),
               tr("Which amax of the history the delayed scale is computed from."),
               {{"max", tr("max over the history"),
                 tr("The largest amax in the history: safe, but slow to forget a spike.")},
                {"most_recent", tr("most recent step"),
                 tr("Only the last step's amax: follows the data, but a rise overflows.")}});
    add_choice(&RecipeOptions::gemm, "recipe_gemm", tr("GEMMs"),
               tr("How the matrix products of Dense layers use the FP8 tensors."),
               {{"auto", tr("auto: FP8 where the GPU has it"),
                 tr("Real FP8 GEMMs (cuBLASLt, FP8 tensor cores) on a GPU of compute capability "
                    "8.9 or higher; quantise-dequantise elsewhere.")},
                {"fp8", tr("FP8 GEMMs"),
                 tr("Float8 codes multiplied, the two scales applied after the float32 sum, as "
                    "FP8 tensor cores do; the CPU engine emulates it exactly.")},
                {"fake_quant", tr("quantise-dequantise"),
                 tr("Each input rounded to FP8 and decoded back to float32, then an ordinary "
                    "float32 GEMM: the same values, each scale applied before the sum.")}});
    // The MX policies (OCP MX v1.0).
    add_choice(&RecipeOptions::scale_rule, "recipe_scale_rule", tr("Scale rule"),
               tr("How each 32-value block's power-of-two (E8M0) scale follows the block's "
                  "amax."),
               {{"floor", tr("floor: OCP spec, may clip"),
                 tr("2^(floor(log2 amax) − emax), the OCP MX rule: a block's largest values "
                    "may exceed the format and clip.")},
                {"ceil", tr("ceil: TE, never clips"),
                 tr("The smallest power of two that fits the block's amax (Transformer "
                    "Engine): nothing clips, small values keep a bit less.")}});
    // nvfp4 (NVIDIA's NVFP4 training recipe); stochastic rounding also suits MX and FP8 block.
    add_flag(&RecipeOptions::weight_2d, "recipe_weight_2d", tr("16×16 weight tiles"),
             tr("One scale per 16×16 tile of the weights, so backprop's transposed copy is "
                "quantised alike; off: 16 values down each column."));
    add_flag(&RecipeOptions::stochastic_gradients, "recipe_stochastic",
             tr("Stochastic rounding on gradients"),
             tr("Rounds each gradient up or down at random in proportion to its distance, so "
                "small updates survive on average instead of rounding away."));
    add_flag(&RecipeOptions::hadamard, "recipe_hadamard", tr("Random Hadamard transform on dW"),
             tr("Mixes each run of 16 batch rows of dW's inputs (a random ±1 Hadamard rotation, "
                "undone by the product) so one outlier no longer sets a whole block's scale."));
    // New boolean options go here, one add_flag call each (offered where make_recipe takes them).
    add_seed(tr("Rounding seed"), tr("Seeds the stochastic rounding and the Hadamard signs: the "
                                     "same seed rounds the same way, so the run repeats exactly."));

    m_error_label = new QLabel(this);
    m_error_label->setObjectName("recipe_error");
    m_error_label->setWordWrap(true);
    m_error_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_form->addRow(m_error_label);
    m_defaults = new QPushButton(tr("Policy defaults"), this);
    m_defaults->setObjectName("recipe_defaults");
    m_defaults->setToolTip(tr("Sets every recipe field back to the policy's defaults."));
    auto* defaults_row = new QHBoxLayout;
    defaults_row->addWidget(m_defaults);
    defaults_row->addStretch(1);
    m_form->addRow(QString(), defaults_row);
    connect(m_defaults, &QPushButton::clicked, this, [this] {
        m_unreadable.reset();
        m_options = {};
        refresh();
        emit changed();
    });
    refresh();
}

void RecipeEditor::add_field(const QString& label, Field field) {
    if (label.isEmpty())
        m_form->addRow(field.widget); // a check box carries its own text
    else
        m_form->addRow(label, field.widget);
    m_fields.push_back(std::move(field));
}

void RecipeEditor::add_choice(std::optional<std::string> RecipeOptions::*member, const char* name,
                              const QString& label, const QString& tip,
                              const std::vector<Choice>& choices) {
    auto* combo = new QComboBox(this);
    combo->setObjectName(name);
    combo->setToolTip(tip);
    // The longest choice ("hybrid: E4M3 forward, E5M2 gradients") must not widen the form past a
    // narrow settings panel: the combo may shrink (and elide) instead of adding a scroll bar.
    combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    combo->setMinimumContentsLength(12);
    for (const Choice& choice : choices) {
        combo->addItem(choice.text, QString::fromLatin1(choice.value));
        combo->setItemData(combo->count() - 1, choice.tip, Qt::ToolTipRole);
    }
    Field f;
    f.widget = combo;
    f.is_set = [member](const RecipeOptions& o) { return (o.*member).has_value(); };
    f.copy = [member](RecipeOptions& to, const RecipeOptions& from) { to.*member = from.*member; };
    f.clear = [member](RecipeOptions& o) { (o.*member).reset(); };
    f.read = [member, combo](RecipeOptions& o) {
        o.*member = combo->currentData().toString().toStdString();
    };
    f.probes = [member, combo](const RecipeOptions& others) {
        std::vector<RecipeOptions> out;
        for (int i = 0; i < combo->count(); ++i) {
            out.push_back(others);
            out.back().*member = combo->itemData(i).toString().toStdString();
        }
        return out;
    };
    f.show = [this, member, combo, probes = f.probes](const RecipeOptions& o) {
        if (o.*member) {
            combo->setCurrentIndex(combo->findData(QString::fromStdString(*(o.*member))));
            return;
        }
        const int i = default_index(m_policy, probes(o), recipe_of(m_policy, o));
        if (i >= 0) combo->setCurrentIndex(i);
    };
    const std::size_t index = m_fields.size();
    connect(combo, &QComboBox::currentIndexChanged, this,
            [this, index] { edited(m_fields[index]); });
    add_field(label, std::move(f));
}

void RecipeEditor::add_flag(std::optional<bool> RecipeOptions::*member, const char* name,
                            const QString& label, const QString& tip) {
    auto* box = new QCheckBox(label, this);
    box->setObjectName(name);
    box->setToolTip(tip);
    Field f;
    f.widget = box;
    f.is_set = [member](const RecipeOptions& o) { return (o.*member).has_value(); };
    f.copy = [member](RecipeOptions& to, const RecipeOptions& from) { to.*member = from.*member; };
    f.clear = [member](RecipeOptions& o) { (o.*member).reset(); };
    f.read = [member, box](RecipeOptions& o) { o.*member = box->isChecked(); };
    f.probes = [member](const RecipeOptions& others) {
        std::vector<RecipeOptions> out(2, others);
        out[0].*member = false;
        out[1].*member = true;
        return out;
    };
    f.show = [this, member, box, probes = f.probes](const RecipeOptions& o) {
        if (o.*member) {
            box->setChecked(*(o.*member));
            return;
        }
        const int i = default_index(m_policy, probes(o), recipe_of(m_policy, o));
        if (i >= 0) box->setChecked(i == 1);
    };
    const std::size_t index = m_fields.size();
    connect(box, &QCheckBox::toggled, this, [this, index] { edited(m_fields[index]); });
    add_field(QString(), std::move(f));
}

void RecipeEditor::add_number(std::optional<int> RecipeOptions::*member, const char* name,
                              const QString& label, const QString& tip, int min, int max,
                              int (*shown)(const QuantRecipe&)) {
    auto* spin = new QSpinBox(this);
    spin->setObjectName(name);
    spin->setToolTip(tip);
    spin->setRange(min, max); // make_recipe's range for the field: no rejected value is typable
    Field f;
    f.widget = spin;
    f.is_set = [member](const RecipeOptions& o) { return (o.*member).has_value(); };
    f.copy = [member](RecipeOptions& to, const RecipeOptions& from) { to.*member = from.*member; };
    f.clear = [member](RecipeOptions& o) { (o.*member).reset(); };
    f.read = [member, spin](RecipeOptions& o) { o.*member = spin->value(); };
    f.probes = [member, min, max](const RecipeOptions& others) {
        std::vector<RecipeOptions> out(2, others);
        out[0].*member = min;
        out[1].*member = max;
        return out;
    };
    f.show = [this, member, spin, shown](const RecipeOptions& o) {
        if (o.*member) {
            spin->setValue(*(o.*member));
        } else if (const std::optional<QuantRecipe> r = recipe_of(m_policy, o)) {
            spin->setValue(shown(*r));
        }
    };
    const std::size_t index = m_fields.size();
    connect(spin, &QSpinBox::valueChanged, this, [this, index] { edited(m_fields[index]); });
    add_field(label, std::move(f));
}

void RecipeEditor::add_seed(const QString& label, const QString& tip) {
    auto* edit = new QLineEdit(this);
    edit->setObjectName("recipe_seed");
    edit->setToolTip(tip);
    edit->setValidator(
        new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9]{1,20}")), edit));
    Field f;
    f.widget = edit;
    f.needs_stochastic = true;
    f.is_set = [](const RecipeOptions& o) { return o.seed.has_value(); };
    f.copy = [](RecipeOptions& to, const RecipeOptions& from) { to.seed = from.seed; };
    f.clear = [](RecipeOptions& o) { o.seed.reset(); };
    f.read = [edit](RecipeOptions& o) {
        bool ok = false;
        const qulonglong seed = edit->text().toULongLong(&ok);
        if (ok) o.seed = seed; // empty or past 2^64 - 1: keeps the seed it had
    };
    f.probes = [](const RecipeOptions&) { return std::vector<RecipeOptions>(); };
    f.show = [this, edit](const RecipeOptions& o) {
        if (o.seed) {
            edit->setText(QString::number(*o.seed));
        } else if (const std::optional<QuantRecipe> r = recipe_of(m_policy, o)) {
            // The activations round with seed + 0, the weights + 1, the gradients + 2.
            edit->setText(QString::number(r->activation.block.seed));
        }
    };
    const std::size_t index = m_fields.size();
    connect(edit, &QLineEdit::textEdited, this, [this, index] { edited(m_fields[index]); });
    add_field(label, std::move(f));
}

bool RecipeEditor::offered(const Field& field, const RecipeOptions& others) const {
    const std::optional<QuantRecipe> base = recipe_of(m_policy, others);
    if (!base) return false;
    if (field.needs_stochastic) return uses_seed(*base);
    for (const RecipeOptions& probe : field.probes(others)) {
        const std::optional<QuantRecipe> r = recipe_of(m_policy, probe);
        if (r && *r != *base) return true;
    }
    return false;
}

RecipeOptions RecipeEditor::normalized(const RecipeOptions& wanted) const {
    RecipeOptions kept;
    for (const Field& field : m_fields) {
        if (!field.is_set(wanted) || !offered(field, kept)) continue;
        RecipeOptions trial = kept;
        field.copy(trial, wanted);
        const std::optional<QuantRecipe> r = recipe_of(m_policy, trial);
        if (r && r != recipe_of(m_policy, kept)) kept = trial;
    }
    return kept;
}

void RecipeEditor::edited(const Field& field) {
    if (m_filling) return;
    RecipeOptions wanted = m_options;
    field.read(wanted);
    m_unreadable.reset();
    m_options = normalized(wanted);
    refresh();
    emit changed();
}

void RecipeEditor::refresh() {
    const bool was_filling = m_filling;
    m_filling = true;
    const bool quantised = is_quantized_policy(m_policy.toStdString());
    for (const Field& field : m_fields) {
        RecipeOptions others = m_options;
        field.clear(others);
        const bool on = quantised && offered(field, others);
        m_form->setRowVisible(field.widget, on);
        if (on) field.show(m_options);
    }
    m_error.clear();
    if (m_unreadable || quantised) {
        try {
            make_recipe(m_policy.toStdString(), m_unreadable.value_or(m_options));
        } catch (const std::exception& e) {
            m_error = QString::fromUtf8(e.what());
        }
    }
    m_error_label->setText(m_error);
    m_error_label->setStyleSheet(
        QStringLiteral("color: %1;").arg(lab::overflow_colour(palette()).name()));
    m_form->setRowVisible(m_error_label, !m_error.isEmpty());
    m_defaults->setEnabled(m_unreadable.has_value() || !(m_options == RecipeOptions{}));
    // A policy that quantises nothing has no recipe; the group still shows a file's bad one.
    setVisible(quantised || m_unreadable.has_value());
    m_filling = was_filling;
}

void RecipeEditor::set_recipe(const QString& policy, const std::optional<RecipeOptions>& options) {
    m_policy = policy;
    m_unreadable.reset();
    if (options && !recipe_of(policy, *options)) m_unreadable = options;
    m_options = normalized(options.value_or(RecipeOptions{}));
    refresh();
}

void RecipeEditor::set_policy(const QString& policy) {
    if (policy == m_policy) return;
    const RecipeOptions wanted = m_unreadable.value_or(m_options);
    m_policy = policy;
    m_unreadable.reset();
    m_options = normalized(wanted);
    refresh();
}

std::optional<RecipeOptions> RecipeEditor::options() const {
    if (m_unreadable) return m_unreadable;
    if (m_options == RecipeOptions{}) return std::nullopt;
    return m_options;
}

QString RecipeEditor::error_text() const {
    return m_error;
}

} // namespace mantissa::ui
