# write_if_changed(PATH TEXT): writes TEXT to PATH unless PATH already holds exactly TEXT, so that a generated
# file keeps its timestamp (and what depends on it is not rebuilt) when its content has not changed.
# Included by the generator scripts run with cmake -P (git_commit.cmake, embed_model_presets.cmake).
function(write_if_changed path text)
  set(old "")
  if(EXISTS "${path}")
    file(READ "${path}" old)
  endif()
  if(NOT "${old}" STREQUAL "${text}")
    file(WRITE "${path}" "${text}")
  endif()
endfunction()
