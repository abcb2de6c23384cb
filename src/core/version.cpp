// sia::version(): compiled into libsia, so it reports the library actually loaded, not the headers.
#include <sia/build_config.hpp>
#include <sia/version.hpp>

namespace sia {

std::string_view version() noexcept { return SIA_VERSION_STRING; }

}  // namespace sia
