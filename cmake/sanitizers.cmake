# ASan + UBSan for the `asan` preset. UBSan findings abort so that CTest reports them as failures.
if(TENFERRO_SANITIZE)
  add_compile_definitions(TENFERRO_SANITIZED_BUILD)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
