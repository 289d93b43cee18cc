// Lesson <-> JSON: a strict reader (unknown fields, wrong types and empty texts are errors naming
// the file and field) that builds each run from an inline experiment or a preset plus changes.
#include "core/train/lesson.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/io/atomic_file.h"
#include "core/io/strict_json.h"

namespace mantissa {

namespace {

using nlohmann::json;

// The lesson's own value rules on top of the shared field-path reader (core/io/strict_json.h).
// Its messages name a value's kind only ("got a number"): lesson values are long texts.
class LessonReader : public JsonFieldReader {
public:
    using JsonFieldReader::JsonFieldReader;

    std::string text(const json& v, const std::string& path) const {
        if (!v.is_string()) fail(path, "expected a string, got " + json_kind(v));
        std::string s = v.get<std::string>();
        if (s.find_first_not_of(" \t\n") == std::string::npos) fail(path, "must not be empty");
        return s;
    }

    std::vector<std::string> paragraphs(const json& v, const std::string& path) const {
        if (!v.is_array() || v.empty())
            fail(path, "expected a non-empty list of strings, got " + json_kind(v));
        std::vector<std::string> out;
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back(text(v[i], element(path, i)));
        return out;
    }
};

LessonExperiment read_experiment(const LessonReader& r, const json& v, const std::string& path,
                                 const ExperimentFileReader& read_file_named) {
    if (!v.is_object()) r.fail(path, "expected an object, got " + json_kind(v));
    r.check_fields(v, path, {"label", "file", "set", "experiment"});
    if (!v.contains("label"))
        r.fail(path, "missing field 'label' (what this run shows, e.g. \"float16, no scaling\")");
    LessonExperiment out;
    out.label = r.text(v["label"], path + ".label");
    const bool inline_experiment = v.contains("experiment");
    if (inline_experiment == v.contains("file"))
        r.fail(path, "expected exactly one of 'file' (a preset in resources/experiments) or "
                     "'experiment' (an inline experiment)");
    json merged;
    std::string where = r.source() + ": " + path;
    if (inline_experiment) {
        if (v.contains("set"))
            r.fail(path + ".set", "only with 'file'; write the values into 'experiment' instead");
        merged = v["experiment"];
        if (!merged.is_object())
            r.fail(path + ".experiment", "expected an object, got " + json_kind(merged));
    } else {
        const std::string file = r.text(v["file"], path + ".file");
        std::string preset;
        try {
            preset = read_file_named(file);
        } catch (const Error& e) {
            r.fail(path + ".file", std::string("cannot read the preset: ") + e.what());
        }
        merged = parse_strict_json(preset, file);
        if (v.contains("set")) {
            if (!v["set"].is_object())
                r.fail(path + ".set", "expected an object, got " + json_kind(v["set"]));
            merged.merge_patch(v["set"]);
            where += " (" + file + " with 'set')";
        } else {
            where += " (" + file + ")";
        }
    }
    out.experiment = experiment_from_json(merged.dump(), where);
    // The label names the run in the runs list and the comparison table.
    out.experiment.name = out.label;
    return out;
}

} // namespace

Lesson lesson_from_json(const std::string& text, const std::string& source, const std::string& id,
                        const ExperimentFileReader& read_experiment_file) {
    const json root = parse_strict_json(text, source);
    LessonReader r(source);
    if (!root.is_object())
        throw Error(ErrorKind::Config,
                    source + ": expected a JSON object at the top level, got " + json_kind(root));
    r.check_fields(root, "",
                   {"format_version", "title", "text", "experiments", "look_at", "needs_gpu",
                    "histogram_step"});
    if (root.contains("format_version")) {
        const json& v = root["format_version"];
        if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
            r.fail("format_version", "expected a positive integer");
        if (v.get<std::int64_t>() > kLessonFormatVersion)
            r.fail("format_version", "this lesson is format_version " + v.dump() +
                                         ", written by a newer Mantissa; update Mantissa to open "
                                         "it");
    }
    for (const char* required : {"title", "text", "experiments", "look_at"})
        if (!root.contains(required))
            r.fail(required, "missing; a lesson needs a title, text, "
                             "experiments and look_at");
    Lesson lesson;
    lesson.id = id;
    lesson.title = r.text(root["title"], "title");
    lesson.text = r.paragraphs(root["text"], "text");
    lesson.look_at = r.paragraphs(root["look_at"], "look_at");
    if (root.contains("needs_gpu")) {
        if (!root["needs_gpu"].is_boolean())
            r.fail("needs_gpu", "expected true or false, got " + json_kind(root["needs_gpu"]));
        lesson.needs_gpu = root["needs_gpu"].get<bool>();
    }
    if (root.contains("histogram_step")) {
        const json& v = root["histogram_step"];
        if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
            r.fail("histogram_step", "expected a training step (an integer >= 1), got " +
                                         (v.is_number() ? v.dump() : json_kind(v)));
        lesson.histogram_step = v.get<std::int64_t>();
    }
    const json& experiments = root["experiments"];
    if (!experiments.is_array() || experiments.empty())
        r.fail("experiments", "expected a non-empty list of runs, got " + json_kind(experiments));
    std::set<std::string> labels;
    for (std::size_t i = 0; i < experiments.size(); ++i) {
        const std::string path = "experiments[" + std::to_string(i) + "]";
        lesson.experiments.push_back(
            read_experiment(r, experiments[i], path, read_experiment_file));
        if (!labels.insert(lesson.experiments.back().label).second)
            r.fail(path + ".label", "\"" + lesson.experiments.back().label +
                                        "\" labels two runs; labels must differ");
    }
    return lesson;
}

Lesson load_lesson(const std::string& path, const std::string& experiments_dir) {
    const std::filesystem::path p(path);
    return lesson_from_json(
        read_file(path), p.filename().string(), p.stem().string(), [&](const std::string& file) {
            return read_file((std::filesystem::path(experiments_dir) / file).string());
        });
}

std::vector<Lesson> load_lessons(const std::string& lessons_dir,
                                 const std::string& experiments_dir) {
    std::vector<std::string> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(lessons_dir, ec))
        if (entry.path().extension() == ".json") files.push_back(entry.path().string());
    if (ec)
        throw Error(ErrorKind::Io, "cannot list lessons in '" + lessons_dir + "': " + ec.message());
    std::sort(files.begin(), files.end());
    std::vector<Lesson> lessons;
    for (const std::string& f : files) lessons.push_back(load_lesson(f, experiments_dir));
    return lessons;
}

} // namespace mantissa
