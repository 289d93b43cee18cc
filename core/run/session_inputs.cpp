// SessionEngine: resolves an EngineSource once, so every session opens its engine the same way.
#include "core/run/session_inputs.h"

#include "core/error.h"

namespace mantissa {

SessionEngine::SessionEngine(EngineSource source, const std::string& device) {
    if (source.backend) {
        m_backend = source.backend;
        return;
    }
    m_choice = source.device
                   ? std::move(source.device)
                   : std::optional<DeviceChoice>(open_device(device, source.open_options));
    if (!m_choice->backend) throw Error(ErrorKind::Internal, "session: the device has no engine");
    m_backend = m_choice->backend.get();
}

} // namespace mantissa
