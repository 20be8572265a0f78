"""Makes mmla's pool visible to threadpoolctl (user_api 'blas', internal_api 'mmla'), so that
`threadpool_limits(1)` also limits mmla, as it does OpenBLAS and MKL."""

try:
    import threadpoolctl as _tpc
except ImportError:  # optional
    _tpc = None

if _tpc is not None and hasattr(_tpc, "register"):
    from . import _mmla

    class MmlaController(_tpc.LibController):
        user_api = "blas"
        internal_api = "mmla"
        # threadpoolctl finds controllers by the file names of the loaded shared objects: ours is
        # the extension module itself (the core is linked into it).
        filename_prefixes = ("_mmla.",)

        def get_num_threads(self):
            return _mmla.get_num_threads()

        def set_num_threads(self, num_threads):
            _mmla.set_num_threads(int(num_threads))

        def get_version(self):
            return _mmla.version()

        def set_additional_attributes(self):
            pass

    _tpc.register(MmlaController)
