// Drag-and-drop of experiment files. Remote URLs are refused: opening one would need a download
// the user did not ask for.
#include "ui/editor/file_drop.h"

#include <QMimeData>
#include <QUrl>

namespace mantissa::ui {

QString dropped_experiment_file(const QMimeData* mime) {
    if (!mime || !mime->hasUrls()) return {};
    for (const QUrl& url : mime->urls()) {
        if (!url.isLocalFile()) continue;
        const QString path = url.toLocalFile();
        if (path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive)) return path;
    }
    return {};
}

} // namespace mantissa::ui
