"""A Pulumi component provider for the library's public components (GkeCluster, EksCluster,
ExistingCluster, Determined), so that programs in any Pulumi language can use them:
`pulumi package add ./provider` generates an SDK from the schema the SDK's analyzer infers.

`args.py` (the TypedDict args) and `hosted.py` (the components the provider hosts) are
generated from the library by scripts/provider_args.py; `cluster.py` carries the cluster
handle across languages; `validation.py` turns the args the host hands a component into the
library's pydantic Args. No module here is named like a top-level package the library
imports (components, plan, policies): the language host may run __main__.py with this
directory first on sys.path.
"""
