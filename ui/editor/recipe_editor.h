// RecipeEditor: the experiment form's "Recipe" group: the options of a quantised policy's recipe
// (core/numeric/quant_recipe.h, RecipeOptions): FP8 delayed / current / block scaling, the MX scale
// rule, NVFP4's 2-D weight tiles and stochastic rounding. Only the fields the policy takes are
// shown, each at the value make_recipe() gives when it is left unset.
#pragma once

#include <QGroupBox>
#include <QString>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/numeric/quant_recipe.h"

class QFormLayout;
class QLabel;
class QPushButton;

namespace mantissa::ui {

class RecipeEditor final : public QGroupBox {
    Q_OBJECT

public:
    explicit RecipeEditor(QWidget* parent = nullptr);

    // Shows `options` for `policy`; unset fields show the policy's defaults. Options that
    // make_recipe() rejects (a hand-edited file) are kept as they are, with its error shown,
    // until the user edits a field or picks another policy.
    void set_recipe(const QString& policy, const std::optional<RecipeOptions>& options);
    // The global policy changed: keeps the chosen options that still apply, drops the others.
    void set_policy(const QString& policy);
    // What the experiment's "recipe" holds: only the options that change the recipe from the
    // policy's defaults; nullopt when none do, and always for a policy that quantises nothing.
    std::optional<RecipeOptions> options() const;
    // make_recipe()'s message for options() ("recipe.history_len: must be ≥ 1"); empty if valid.
    QString error_text() const;

signals:
    void changed(); // the user edited a field (set_recipe / set_policy do not emit it)

private:
    // One RecipeOptions field and its control (see recipe_editor.cpp).
    struct Field {
        QWidget* widget = nullptr;
        std::function<bool(const RecipeOptions&)> is_set;
        std::function<void(RecipeOptions& to, const RecipeOptions& from)> copy;
        std::function<void(RecipeOptions&)> clear;
        std::function<void(RecipeOptions&)> read; // the control's value into the options
        // Shows the value `options` sets, or else the one make_recipe() takes for it.
        std::function<void(const RecipeOptions& options)> show;
        // The option sets the control can produce from `others` (one per choice, or its range's
        // ends): the field is offered when one of them is accepted and changes the recipe.
        std::function<std::vector<RecipeOptions>(const RecipeOptions& others)> probes;
        // Offered only while the recipe rounds stochastically (the seed); else derived as above.
        bool needs_stochastic = false;
    };

    struct Choice {
        const char* value; // as the JSON has it: "delayed", "ceil", ...
        QString text, tip;
    };

    void add_choice(std::optional<std::string> RecipeOptions::*member, const char* name,
                    const QString& label, const QString& tip, const std::vector<Choice>& choices);
    void add_flag(std::optional<bool> RecipeOptions::*member, const char* name,
                  const QString& label, const QString& tip);
    void add_number(std::optional<int> RecipeOptions::*member, const char* name,
                    const QString& label, const QString& tip, int min, int max,
                    int (*shown)(const QuantRecipe&));
    void add_seed(const QString& label, const QString& tip);
    void add_field(const QString& label, Field field);

    bool offered(const Field& field, const RecipeOptions& others) const;
    // `wanted` cut down to what applies to m_policy, in field order, leaving unset what would
    // not change the recipe (a default written out, a field the policy does not take).
    RecipeOptions normalized(const RecipeOptions& wanted) const;
    void edited(const Field& field); // a control changed: take its value, re-show, emit
    void refresh();                  // rows shown, values, error, the group's visibility

    QString m_policy = QStringLiteral("float32");
    RecipeOptions m_options;                   // what the controls hold, normalised
    std::optional<RecipeOptions> m_unreadable; // loaded options make_recipe() rejects, kept
    QString m_error;
    bool m_filling = false;
    std::vector<Field> m_fields; // in dependency order: kind first, the seed last
    QFormLayout* m_form = nullptr;
    QLabel* m_error_label = nullptr;
    QPushButton* m_defaults = nullptr;
};

} // namespace mantissa::ui
