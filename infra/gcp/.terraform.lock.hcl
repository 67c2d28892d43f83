# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "registry.terraform.io/hashicorp/google" {
  version     = "6.28.0"
  constraints = "~> 6.0"
  hashes = [
    "h1:8FLr1ZsOobsrFAiiwGQzuqzVjBj5mYYWkMN0Y09Qjq8=",
    "h1:DGPyFrIRVTigrTsVQV6r9qoiCX7OcGfieDjnk+TcXB8=",
    "h1:G2D9+1cuLBLMkeOHUXHrV1WQdddkogA5q3anL0Xr2TI=",
    "h1:S9knFeidlUtcNO+mhizWU9ibt6L0mSz5dgLV6TIA0m4=",
    "h1:dTcCD7AJBI1mAKZODNtwtdPwfF7kqd641O+NNUS1WHw=",
    "h1:dU734u/u9hk/RHDDj39246xwiczNx3esgivjOudMOs0=",
    "h1:hWvkPXL2I2rd7EqvaVPisY471myaTrNiFopIjExFXfQ=",
    "h1:kdykym1DNqAwgPjz4qtiNiQ4gHDrctsWvIvNDQTnQrU=",
    "h1:oOYYQJYDlh7UoQx7t7y2DUsM8puXMBOJ+CWd6JaYCro=",
    "h1:s/EZB00Y4Mct8G43Vp/X1BpDNGq9j7AbIPBj4icIv0A=",
    "h1:v1WgDN2R+XUky0itOG0bf6E+m+w+d3Mh8tZVP/XBKnQ=",
    "zh:2528b47d20d378283478feafdf16aade01d56d42c3283d7c904fd7a108f150f0",
    "zh:36ef5e5b960375a166434f5836b5b957d760c34edfa256133c575e865ff4ee3c",
    "zh:5fb97ca9465379dc5b965e407c5ccaa6c41fc1984214497fbf5b2bb49a585297",
    "zh:78d2adcf6623f170aab3956d26d115032fecea11db4f62ee9ee76b67389546f3",
    "zh:832bb0a957d4d1e664391186791af1cea14e0af878ea12d1b0ce5bb0a5dc98ef",
    "zh:8c1eee42fd21b64596b72b4808595b6b1e07c3c614990e22b347c35a42360fed",
    "zh:8fcb3165c29944d4465ce9db93daf2b9c816223bf6fcbd95818814525a706038",
    "zh:931d05f9ba329942e6888873022e31c458048a8c2a3e42a6d1952337d2f9b240",
    "zh:b78472cd5750b6d2d363c735a5e8d2a7bb98d0979ab7e42b8c5f9d17a2e5bbb6",
    "zh:d203df11df368d2316894c481d34be2de9e54d1f90cec0056ef5154d06a9edc7",
    "zh:f569b65999264a9416862bca5cd2a6177d94ccb0424f3a4ef424428912b9cb3c",
    "zh:fecb0db6ab81777a0f48d315838f911753e9c5d66e22eebd491abd83c49fde2c",
  ]
}
