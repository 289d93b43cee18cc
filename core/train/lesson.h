// Lesson: a guided experiment for a class (title, explanation, the runs to start, what to look at),
// read from resources/lessons/*.json by a strict reader shared by the GUI and the tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/train/experiment.h"

namespace mantissa {

inline constexpr int kLessonFormatVersion = 1;

struct LessonExperiment {
    std::string label;     // "float16, no loss scaling": what this run shows
    Experiment experiment; // complete, validated; its name is the label
};

struct Lesson {
    std::string id;                            // the file's stem: "03-loss-scaling"
    std::string title;                         // "Without loss scaling, gradients underflow"
    std::vector<std::string> text;             // paragraphs, plain words for a lecturer
    std::vector<LessonExperiment> experiments; // one, or several to compare
    std::vector<std::string> look_at;          // what to watch, one point each
    bool needs_gpu = false; // its point shows only on a GPU (it still runs on a CPU)
    // The training step whose gradient histograms the text reads ("measured at step 1"): the
    // Gradients tab shows it instead of the newest while the lesson is open (0: the newest).
    std::int64_t histogram_step = 0;
};

// Returns the JSON text of a preset experiment named in a lesson ("mlp-small.json");
// throws Error(Io) when there is none.
using ExperimentFileReader = std::function<std::string(const std::string& file)>;

// Parses a lesson. `source` names the file in messages ("03-loss-scaling.json: experiments[1]:
// set.policy: ..."); `id` becomes Lesson::id. An experiment is either inline
// ({"label", "experiment": {...}}) or a preset plus changes ({"label", "file", "set": {...}},
// where "set" is merged into the preset as a JSON merge patch: objects merge, the rest replaces).
Lesson lesson_from_json(const std::string& text, const std::string& source, const std::string& id,
                        const ExperimentFileReader& read_experiment_file);
// Reads `path`; presets come from `experiments_dir` (resources/experiments).
Lesson load_lesson(const std::string& path, const std::string& experiments_dir);
// Every *.json lesson in `lessons_dir`, ordered by file name. Throws on the first bad one.
std::vector<Lesson> load_lessons(const std::string& lessons_dir,
                                 const std::string& experiments_dir);

} // namespace mantissa
